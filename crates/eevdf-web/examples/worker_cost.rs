fn main() {
    let text = eevdf_scenario::presets::preset("s08-ct-rtapp")
        .unwrap()
        .text;
    let sc = eevdf_scenario::scenario::Scenario::parse(text).unwrap();
    let t = std::time::Instant::now();
    let _ = eevdf_sim::simulate(sc.sim.clone());
    println!("simulate {:?}", t.elapsed());
    let req = eevdf_web::worker::Request {
        id: 1,
        lane: 0,
        scenario: text.into(),
    };
    let mut run = eevdf_web::worker::Runner::new(&req).unwrap();
    let t0 = std::time::Instant::now();
    let clock = || t0.elapsed().as_secs_f64() * 1000.0;
    let mut n = 0;
    loop {
        n += 1;
        if let eevdf_web::worker::Chunk::Finished(_) = run.chunk(&clock) {
            break;
        }
    }
    println!("runner {:?} in {n} chunks", t0.elapsed());
    for traced in [false, true] {
        let mut sim = eevdf_sim::Sim::new(sc.sim.clone());
        let t = std::time::Instant::now();
        let end = sim.duration();
        let mut now = 0u64;
        let mut step = 1_000_000u64;
        let mut k = 0;
        while now < end {
            let next = (now + step).min(end);
            if traced {
                sim.record_trace();
            }
            sim.run_until(next);
            if traced {
                let _ = sim.take_trace();
            }
            now = next;
            step = (step * 2).min(8_000_000_000);
            k += 1;
        }
        let _ = sim.finish(end);
        println!("stepped traced={traced} {:?} in {k} steps", t.elapsed());
    }
}

#[allow(dead_code)]
fn variants() {}
