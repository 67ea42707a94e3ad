//! Pictures for slides: the page's SVG figures (the teaching axis, the
//! sweep chart) downloaded as standalone SVG or PNG with a caption line
//! (what was shown, the engine version). The page styles its SVG with
//! CSS; a file has no page, so each element's computed paint and font go
//! into its attributes before it leaves.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlCanvasElement, HtmlImageElement};

const SVG_NS: &str = "http://www.w3.org/2000/svg";

/// The computed properties an exported SVG carries as attributes.
const PAINT: [&str; 9] = [
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-opacity",
    "stroke-dasharray",
    "font-family",
    "font-size",
    "font-weight",
];

/// Height added under the figures for the caption, in SVG units.
const CAPTION_H: f64 = 22.0;

/// The caption's first words: what made the picture.
pub fn made_with() -> String {
    format!(
        "eevdf-playground, engine {}",
        eevdf_scenario::scenario::ENGINE_VERSION
    )
}

/// `(width, height)` of an SVG's viewBox.
fn view_box(svg: &Element) -> Option<(f64, f64)> {
    let vb = svg.get_attribute("viewBox")?;
    let v: Vec<f64> = vb
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    (v.len() == 4).then(|| (v[2], v[3]))
}

/// A copy of `svg` whose elements carry their computed paint.
fn painted_copy(svg: &Element) -> Result<Element, JsValue> {
    let copy: Element = svg.clone_node_with_deep(true)?.dyn_into()?;
    let window = gloo::utils::window();
    let originals = svg.query_selector_all("*")?;
    let copies = copy.query_selector_all("*")?;
    let pairs = std::iter::once((svg.clone(), copy.clone())).chain(
        (0..originals.length()).filter_map(|i| {
            let o = originals.item(i)?.dyn_into::<Element>().ok()?;
            let c = copies.item(i)?.dyn_into::<Element>().ok()?;
            Some((o, c))
        }),
    );
    for (o, c) in pairs {
        if let Some(style) = window.get_computed_style(&o)? {
            for p in PAINT {
                let v = style.get_property_value(p)?;
                if !v.is_empty() {
                    c.set_attribute(p, &v)?;
                }
            }
        }
        c.remove_attribute("class")?;
    }
    Ok(copy)
}

/// One standalone SVG document: `figures` stacked top to bottom on a
/// white ground, `caption` under them.
pub fn svg_document(figures: &[Element], caption: &str) -> Result<String, JsValue> {
    let width = figures
        .iter()
        .filter_map(view_box)
        .map(|(w, _)| w)
        .fold(0.0f64, f64::max)
        .max(200.0);
    let mut y = 0.0;
    let mut body = String::new();
    for f in figures {
        let Some((_, h)) = view_box(f) else { continue };
        let copy = painted_copy(f)?;
        copy.set_attribute("y", &y.to_string())?;
        copy.set_attribute("height", &h.to_string())?;
        copy.remove_attribute("width")?;
        body.push_str(&copy.outer_html());
        y += h;
    }
    let height = y + CAPTION_H;
    Ok(format!(
        "<svg xmlns=\"{SVG_NS}\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\">\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>{body}\
         <text x=\"6\" y=\"{}\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#1d1f21\" data-caption=\"1\">{}</text></svg>",
        y + 15.0,
        escape(caption)
    ))
}

/// Text as SVG character data.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Saves `href` as `name` (an anchor's `download`).
fn save(href: &str, name: &str) -> Result<(), JsValue> {
    let doc = gloo::utils::document();
    let a: web_sys::HtmlAnchorElement = doc.create_element("a")?.dyn_into()?;
    a.set_href(href);
    a.set_download(name);
    a.click();
    Ok(())
}

/// `svg` as a `data:` URL.
fn data_url(svg: &str) -> String {
    format!(
        "data:image/svg+xml;charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(svg))
    )
}

/// Downloads the figures as `NAME.svg`.
pub fn download_svg(figures: &[Element], caption: &str, name: &str) -> Result<(), JsValue> {
    let doc = svg_document(figures, caption)?;
    save(&data_url(&doc), &format!("{name}.svg"))
}

/// Downloads the figures as `NAME.png`, at twice their size, once the
/// browser has drawn the SVG.
pub fn download_png(figures: &[Element], caption: &str, name: &str) -> Result<(), JsValue> {
    let doc = svg_document(figures, caption)?;
    let img = HtmlImageElement::new()?;
    let name = format!("{name}.png");
    let loaded = img.clone();
    let onload = wasm_bindgen::closure::Closure::once_into_js(move || {
        let draw = || -> Result<(), JsValue> {
            let canvas: HtmlCanvasElement = gloo::utils::document()
                .create_element("canvas")?
                .dyn_into()?;
            let (w, h) = (loaded.natural_width() * 2, loaded.natural_height() * 2);
            canvas.set_width(w);
            canvas.set_height(h);
            let ctx: web_sys::CanvasRenderingContext2d = canvas
                .get_context("2d")?
                .ok_or("no 2d context")?
                .dyn_into()?;
            ctx.draw_image_with_html_image_element_and_dw_and_dh(
                &loaded,
                0.0,
                0.0,
                f64::from(w),
                f64::from(h),
            )?;
            save(&canvas.to_data_url_with_type("image/png")?, &name)
        };
        if let Err(e) = draw() {
            gloo::console::error!(e);
        }
    });
    img.set_onload(Some(onload.unchecked_ref()));
    img.set_src(&data_url(&doc));
    Ok(())
}

/// Downloads the figures as `NAME.png` or `NAME.svg`; a failure goes to
/// the console (the buttons have nothing better to show).
pub fn download(png: bool, figures: &[Element], caption: &str, name: &str) {
    let done = match png {
        true => download_png(figures, caption, name),
        false => download_svg(figures, caption, name),
    };
    if let Err(e) = done {
        gloo::console::error!(e);
    }
}
