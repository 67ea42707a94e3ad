use super::*;

fn machine(text: &str) -> Machine {
    let t = format!("eevdf-scenario v1\nmachine {text}\nend\n");
    eevdf_scenario::scenario::Scenario::parse(&t)
        .unwrap()
        .machine
}

#[test]
fn smp_n_is_qemus_plain_count() {
    let vm = VmTopology::of(&machine("smp4")).unwrap();
    assert!(vm.is_flat());
    assert_eq!(
        (vm.smp.as_str(), vm.to_guest.clone()),
        ("4", vec![0, 1, 2, 3])
    );
    assert_eq!(vm.append(), crate::qemu::APPEND);
    assert_eq!(vm.key_part(), "", "flat boots keep their keys");
    assert!(vm.machine_args(1024).is_empty());
}

#[test]
fn smt_threads_are_neighbours_in_the_guest() {
    // Two nodes of one socket each, two cores of two threads: the
    // simulator's siblings are {0,4} {1,5} {2,6} {3,7}.
    let vm = VmTopology::of(&machine("custom nodes=2 cores=2 smt=2")).unwrap();
    assert_eq!(vm.smp, "cpus=8,sockets=2,dies=1,cores=2,threads=2");
    assert_eq!(vm.to_guest, [0, 2, 4, 6, 1, 3, 5, 7]);
    assert_eq!(vm.to_sim(1), Some(4));
    assert_eq!(
        vm.machine_args(1000),
        [
            "-object",
            "memory-backend-ram,id=mem0,size=500M",
            "-numa",
            "node,nodeid=0,cpus=0-3,memdev=mem0",
            "-object",
            "memory-backend-ram,id=mem1,size=500M",
            "-numa",
            "node,nodeid=1,cpus=4-7,memdev=mem1",
            "-numa",
            "dist,src=0,dst=1,val=20",
        ]
    );
    assert_eq!(show(&vm.domains[0]), "SMT 0-1, MC 0-3, NUMA 0-7");
    assert_eq!(show(&vm.domains[5]), "SMT 4-5, MC 4-7, NUMA 0-7");
    assert!(vm.append().ends_with(DOMAIN_DEBUG_APPEND));
    assert!(vm.key_part().contains("sockets=2"));
}

#[test]
fn sockets_of_one_node_and_memory_that_adds_up() {
    let vm = VmTopology::of(&machine("custom nodes=3 packages=2 cores=2")).unwrap();
    assert_eq!(vm.smp, "cpus=12,sockets=6,dies=1,cores=2,threads=1");
    let args = vm.machine_args(1000);
    let sizes: Vec<&str> = args
        .iter()
        .filter(|a| a.starts_with("memory"))
        .map(|a| a.as_str())
        .collect();
    assert_eq!(
        sizes,
        [
            "memory-backend-ram,id=mem0,size=333M",
            "memory-backend-ram,id=mem1,size=333M",
            "memory-backend-ram,id=mem2,size=334M"
        ]
    );
    assert_eq!(vm.to_guest, (0..12).collect::<Vec<_>>());
    assert_eq!(show(&vm.domains[0]), "MC 0-1, PKG 0-3, NUMA 0-11");
    let nodes = vm.machine_args(1000);
    assert!(nodes.contains(&"node,nodeid=1,cpus=4-7,memdev=mem1".to_string()));
}

#[test]
fn machines_qemu_cannot_give_are_refused() {
    for m in [
        "rb5",
        "orion6",
        "custom clusters=2 cores=4",
        "custom llcs=2 cores=2",
        "custom cores=2 capacity=512,1024",
        "custom cores=4 capacity=512",
        "epyc-2x128c",
        "custom cores=256",
    ] {
        let e = VmTopology::of(&machine(m)).unwrap_err();
        assert!(e.bad_input, "{m}: {e:?}");
    }
    let e = VmTopology::of(&machine("custom cores=4 capacity=512")).unwrap_err();
    assert!(e.message.contains("other than 1024"), "{e:?}");
    assert!(VmTopology::of(&machine("custom cores=255")).is_ok());
    let xeon = VmTopology::of(&machine("xeon-4314-2s")).unwrap();
    assert_eq!(xeon.smp, "cpus=64,sockets=2,dies=1,cores=16,threads=2");
}

#[test]
fn pins_are_translated_into_the_guests_numbers() {
    let text = "eevdf-scenario v1\nmachine custom cores=2 smt=2\n\
                task a kind=hog cpus=2,3\nend\n";
    let mut sc = eevdf_scenario::scenario::Scenario::parse(text).unwrap();
    let vm = VmTopology::of(&sc.machine).unwrap();
    assert!(crate::run::guest_text(&sc).contains("cpus=1,3"));
    vm.pin_in_guest(&mut sc);
    assert_eq!(sc.sim.tasks[0].cpus, Some(vec![1, 3]));
    let flat = "eevdf-scenario v1\nmachine smp4\ntask a kind=hog cpus=2,3\nend\n";
    let flat = eevdf_scenario::scenario::Scenario::parse(flat).unwrap();
    assert!(crate::run::guest_text(&flat).contains("cpus=2-3"));
}

#[test]
fn per_cpu_lines_come_back_in_the_simulators_numbers() {
    use eevdf_scenario::guest::{GuestCpu, GuestReport};
    let vm = VmTopology::of(&machine("custom cores=2 smt=2")).unwrap();
    let mut r = GuestReport {
        cpus: (0..4)
            .map(|cpu| GuestCpu {
                cpu,
                busy_ns: u64::from(cpu),
                switches: 0,
            })
            .collect(),
        ..GuestReport::default()
    };
    vm.cpus_to_sim(&mut r);
    let got: Vec<(u32, u64)> = r.cpus.iter().map(|c| (c.cpu, c.busy_ns)).collect();
    assert_eq!(got, [(0, 0), (1, 2), (2, 1), (3, 3)]);
}

/// A console as `sched_domain_debug()` prints it for `vm`'s domains.
fn console_for(vm: &VmTopology) -> String {
    let mut c = String::from("[    0.4] smpboot: Total of 8 processors activated\n");
    for (cpu, doms) in vm.domains.iter().enumerate() {
        c.push_str(&format!("[    0.5] CPU{cpu} attaching sched-domain(s):\n"));
        for (i, (l, s)) in doms.iter().enumerate() {
            let span = eevdf_sim::topology::cpulist(s);
            c.push_str(&format!(
                "[    0.5] {} domain-{i}: span={span} level={l}\n",
                " ".repeat(i)
            ));
            c.push_str(&format!(
                "[    0.5] {}  groups: 0:{{ span=0 }}\n",
                " ".repeat(i)
            ));
        }
    }
    c
}

#[test]
fn the_console_check_reads_sched_verbose() {
    let vm = VmTopology::of(&machine("custom nodes=2 cores=2 smt=2")).unwrap();
    let good = console_for(&vm);
    vm.check_console(&good).unwrap();
    // Siblings numbered as the simulator numbers them are another machine.
    let other = good.replacen("span=0-1 level=SMT", "span=0,4 level=SMT", 1);
    let e = vm.check_console(&other).unwrap_err();
    assert!(
        e.starts_with("guest CPU 0: the kernel built SMT 0,4"),
        "{e}"
    );
    // A missing level, and a CPU never attached.
    let e = vm
        .check_console(&good.replace("level=NUMA", "level=PKG"))
        .unwrap_err();
    assert!(e.contains("PKG 0-7"), "{e}");
    let e = vm
        .check_console(&good.replace("CPU7 attaching", "CPU7 ignoring"))
        .unwrap_err();
    assert!(e.contains("no sched domains of CPU 7"), "{e}");
    assert!(vm.check_console("").is_err());
    assert!(VmTopology::flat(4).check_console("").is_ok());
    // A later rebuild is the one that counts.
    let rebuilt = format!("{}{good}", other);
    vm.check_console(&rebuilt).unwrap();
}

#[test]
fn cpulists_parse_and_bad_ones_do_not() {
    assert_eq!(parse_cpulist("0-2,5"), Some(vec![0, 1, 2, 5]));
    for bad in ["", "3-1", "a", "0-99999", "1,"] {
        assert_eq!(parse_cpulist(bad), None, "{bad}");
    }
}
