//! The page's surroundings: local storage, the address bar's link, the
//! colour theme and the clipboard.

use eevdf_driver::share;
use eevdf_scenario::scenario::Scenario;
use gloo::timers::callback::Timeout;
use yew::prelude::*;

/// Where the user's last scenario and theme are kept (local storage).
pub(crate) const STORAGE_KEY: &str = "eevdf.scenario";
pub(crate) const THEME_KEY: &str = "eevdf.theme";

/// Keeps the user's scenario for the next visit.
pub(crate) fn remember(text: &str) {
    use gloo::storage::Storage;
    let _ = gloo::storage::LocalStorage::set(STORAGE_KEY, text);
}

/// What the page opens with.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Opening {
    pub(crate) text: String,
    /// The pinned baseline's text.
    pub(crate) pin: Option<String>,
    /// The sweep's flags (`&sweep=`).
    pub(crate) sweep: Option<String>,
    /// A guided tour and its step (`&tour=ID&step=K`).
    pub(crate) tour: Option<share::TourAt>,
    /// A sentence about a link (or its sweep) that could not be read.
    pub(crate) error: Option<String>,
}

/// The scenario the page opens with: the link in the URL fragment if
/// there is one (and it decodes; a `baseline` block in it is pinned, a
/// sweep section opens the sweep), else the user's last scenario (local
/// storage), else the `default` preset. A bad link is reported and the
/// default runs instead; the stored scenario is left alone.
pub(crate) fn initial_scenario() -> Opening {
    let default = eevdf_scenario::presets::preset("default")
        .map(|p| p.text.to_string())
        .unwrap_or_default();
    match link_in_address() {
        None => Opening {
            text: stored_scenario().unwrap_or(default),
            ..Opening::default()
        },
        Some(Ok(o)) => o,
        Some(Err(e)) => Opening {
            text: default,
            error: Some(format!("{e} The default scenario runs instead.")),
            ..Opening::default()
        },
    }
}

/// What the link in the address bar's fragment opens: its scenario
/// text, pinned baseline and sweep; the error is a sentence for the
/// page. A sweep section that does not read leaves the scenario open,
/// with the error said.
pub(crate) fn link_in_address() -> Option<Result<Opening, String>> {
    let hash = gloo::utils::window().location().hash().unwrap_or_default();
    (hash.len() > 1).then(|| {
        let (text, pin) = eevdf_scenario::link::decode_text(&hash)
            .map(share::split_pin)
            .map_err(|e| format!("This link could not be read: {e}."))?;
        let (state, error) = share::state_of(&hash);
        Ok(Opening {
            text,
            pin,
            sweep: state.sweep,
            tour: state.tour,
            error: error.map(|e| format!("{e}; the scenario opens without it.")),
        })
    })
}

/// The user's last scenario from local storage, if it is still valid.
pub(crate) fn stored_scenario() -> Option<String> {
    use gloo::storage::Storage;
    let stored: Option<String> = gloo::storage::LocalStorage::get(STORAGE_KEY).ok();
    stored.filter(|t| Scenario::parse(t).is_ok())
}

/// The page's address without its fragment: the base of share links.
pub(crate) fn page_base() -> String {
    let href = gloo::utils::window().location().href().unwrap_or_default();
    href.split('#').next().unwrap_or_default().to_string()
}

/// Puts a link fragment in the address bar without adding a history
/// entry.
pub(crate) fn show_fragment(frag: &str) {
    if let Ok(h) = gloo::utils::window().history() {
        let _ =
            h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("#{frag}")));
    }
}

/// The colour theme: `auto` follows the system.
pub(crate) fn stored_theme() -> String {
    use gloo::storage::Storage;
    gloo::storage::LocalStorage::get(THEME_KEY).unwrap_or_else(|_| "auto".to_string())
}

pub(crate) fn apply_theme(theme: &str) -> bool {
    let root = gloo::utils::document().document_element();
    if let Some(r) = &root {
        if theme == "auto" {
            let _ = r.remove_attribute("data-theme");
        } else {
            let _ = r.set_attribute("data-theme", theme);
        }
    }
    match theme {
        "dark" => true,
        "light" => false,
        _ => gloo::utils::window()
            .match_media("(prefers-color-scheme: dark)")
            .ok()
            .flatten()
            .is_some_and(|m| m.matches()),
    }
}

/// Writes to the clipboard; says how it went.
pub(crate) fn copy(
    text: String,
    what: &'static str,
    status: UseStateHandle<Option<(String, Option<String>)>>,
) {
    let promise = gloo::utils::window()
        .navigator()
        .clipboard()
        .write_text(&text);
    wasm_bindgen_futures::spawn_local(async move {
        match wasm_bindgen_futures::JsFuture::from(promise).await {
            Ok(_) => {
                status.set(Some((format!("{what} copied."), None)));
                // The confirmation goes away by itself.
                let status = status.clone();
                Timeout::new(4000, move || status.set(None)).forget();
            }
            // No clipboard (permissions, insecure origin): show the text
            // to copy by hand.
            Err(_) => status.set(Some((format!("Copy the {what} from here:"), Some(text)))),
        }
    });
}
