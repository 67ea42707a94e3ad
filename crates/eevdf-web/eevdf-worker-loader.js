// Loads the worker bundle with relative paths so the page works under any
// sub-path (Trunk's own shim passes deprecated arguments to wasm-bindgen).
importScripts("./eevdf-worker.js");
wasm_bindgen({ module_or_path: "./eevdf-worker_bg.wasm" });
