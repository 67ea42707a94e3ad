//! Entry point of the page bundle built by Trunk (`index.html`).

fn main() {
    yew::Renderer::<eevdf_web::App>::new().render();
}
