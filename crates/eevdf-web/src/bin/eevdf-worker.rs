//! Entry point of the Web Worker bundle (`data-type="worker"` in `index.html`).

use gloo::worker::Registrable;

fn main() {
    eevdf_web::worker::SimWorker::registrar()
        .encoding::<eevdf_web::worker::Swb>()
        .register();
}
