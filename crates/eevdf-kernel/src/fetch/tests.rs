//! Fetching, the cache, apt names and mirrors, Debian versions, bzImage
//! headers: unit tests without the network.

use super::*;

#[test]
fn deb822_mirror_skips_security() {
    let text = "Types: deb\n\
            # http://snapshot.debian.org/archive/debian/20250520T000000Z\n\
            URIs: http://deb.debian.org/debian\n\
            Suites: bookworm bookworm-updates\n\
            Components: main\n\
            Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\
            \n\
            Types: deb\n\
            URIs: http://deb.debian.org/debian-security\n\
            Suites: bookworm-security\n\
            Components: main\n";
    assert_eq!(
        mirror_from_deb822(text).as_deref(),
        Some("http://deb.debian.org/debian")
    );
    let sec_first = "Types: deb\nURIs: http://sec.example/debian-security\nSuites: trixie-security\n\n\
            Types: deb-src\nURIs: http://src.example/debian\nSuites: trixie\n\n\
            Types: deb\nEnabled: no\nURIs: http://off.example/debian\nSuites: trixie\n\n\
            Types: deb deb-src\nURIs: http://mirror.example/debian/ http://other/\nSuites: trixie\n";
    assert_eq!(
        mirror_from_deb822(sec_first).as_deref(),
        Some("http://mirror.example/debian")
    );
    assert_eq!(mirror_from_deb822("Types: deb\nSuites: sid\n"), None);
}

#[test]
fn sources_list_mirror() {
    let text = "# comment\n\
            deb-src http://src.example/debian bookworm main\n\
            deb http://security.debian.org/debian-security bookworm-security main\n\
            deb [arch=amd64 signed-by=/k.gpg] https://mirror.example/debian/ bookworm main # x\n";
    assert_eq!(
        mirror_from_sources_list(text).as_deref(),
        Some("https://mirror.example/debian")
    );
    assert_eq!(mirror_from_sources_list("debx http://a b c\n"), None);
    assert_eq!(
        mirror_from_sources_list("deb http://old/debian-security buster/updates main\n"),
        None
    );
}

#[test]
fn sources_list_text() {
    assert_eq!(
            sources_list("http://deb.debian.org/debian", &["sid", "bookworm-backports"]),
            "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64 target=Packages] http://deb.debian.org/debian sid main\n\
             deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64 target=Packages] http://deb.debian.org/debian bookworm-backports main\n"
        );
}

#[test]
fn package_names() {
    let p = parse_package_name("linux-binary-7.2.13+deb14-cloud-amd64").unwrap();
    assert_eq!(p.release, "7.2.13+deb14-cloud-amd64");
    assert_eq!(p.series, "7.2");
    assert_eq!(p.kind, PackageKind::Binary);
    let p = parse_package_name("linux-image-6.12.95+deb12-cloud-amd64-unsigned").unwrap();
    assert_eq!(
        (p.release.as_str(), p.series.as_str(), p.kind),
        (
            "6.12.95+deb12-cloud-amd64",
            "6.12",
            PackageKind::ImageUnsigned
        )
    );
    let p = parse_package_name("linux-image-6.18.15+deb13-cloud-amd64").unwrap();
    assert_eq!((p.series.as_str(), p.kind), ("6.18", PackageKind::Image));
    let p = parse_package_name("linux-image-6.12.90+deb12.1-cloud-amd64").unwrap();
    assert_eq!(p.release, "6.12.90+deb12.1-cloud-amd64");
    for not in [
        "linux-binary-unsigned-7.2.13+deb14-cloud-amd64",
        "linux-binary-7.2.13+deb14-amd64",
        "linux-binary-7.2.13+deb14-rt-amd64",
        "linux-image-7.2.13+deb14-cloud-amd64-dbg",
        "linux-headers-7.2.13+deb14-cloud-amd64",
        "linux-modules-7.2.13+deb14-cloud-amd64",
        "linux-image-cloud-amd64",
        "linux-image-cloud-amd64-dbg",
        "linux-base-7.2.13+deb14-cloud-amd64",
        "linux-image-x.y-cloud-amd64",
    ] {
        assert_eq!(parse_package_name(not), None, "{not}");
    }
}

#[test]
fn series_from_releases() {
    assert_eq!(
        series_of("7.2.13+deb14-cloud-amd64").as_deref(),
        Some("7.2")
    );
    assert_eq!(series_of("6.18").as_deref(), Some("6.18"));
    assert_eq!(series_of("6.19.0-rc3+").as_deref(), Some("6.19"));
    assert_eq!(series_of("6.20-rc1").as_deref(), Some("6.20"));
    assert_eq!(series_of("7"), None);
    assert_eq!(series_of("v7.2"), None);
    assert!(suites_for("7.2").is_some());
    assert!(suites_for("6.1").is_none());
    assert_eq!(
        supported_series().collect::<Vec<_>>(),
        ["7.2", "6.18", "6.17", "6.16", "6.12"]
    );
}

const PAIRS: &[(&str, &str, Ordering)] = &[
    ("1.0", "1.0", Ordering::Equal),
    ("1.0", "1.0-0", Ordering::Equal),
    ("1.0", "1.0-1", Ordering::Less),
    ("1.0~rc1", "1.0", Ordering::Less),
    ("1.0~~", "1.0~", Ordering::Less),
    ("1.0", "1.0a", Ordering::Less),
    ("1.0a", "1.0.1", Ordering::Less),
    ("1.0+b1", "1.0", Ordering::Greater),
    ("1:0.1", "2.0", Ordering::Greater),
    ("0:2.0", "2.0", Ordering::Equal),
    ("1.002", "1.2", Ordering::Equal),
    ("1.10", "1.9", Ordering::Greater),
    ("7.2.13-1", "7.2.12-1~bpo13+1", Ordering::Greater),
    ("6.12.95-1~bpo12+1", "6.12.95-1", Ordering::Less),
    ("6.12.90-1~bpo12+1", "6.12.90-1~bpo12+2", Ordering::Less),
    ("6.12.90-2~bpo12+1", "6.12.90-1~bpo12+2", Ordering::Greater),
    ("6.18.15-1~bpo13+1", "6.18.9-1~bpo13+1", Ordering::Greater),
    ("6.12.95-1~bpo12+1", "6.12.9-1", Ordering::Greater),
    ("2.30-1", "2.30-1+deb12u1", Ordering::Less),
    ("1.2-3-4", "1.2-3-5", Ordering::Less),
];

/// Versions dpkg calls malformed; ordered all the same.
const ODD_PAIRS: &[(&str, &str, Ordering)] = &[
    ("a", "A", Ordering::Greater),
    ("1.0-", "1.0", Ordering::Equal),
    ("", "0", Ordering::Equal),
];

#[test]
fn debian_version_order() {
    for &(a, b, want) in PAIRS.iter().chain(ODD_PAIRS) {
        assert_eq!(compare_debian_versions(a, b), want, "{a} vs {b}");
        assert_eq!(compare_debian_versions(b, a), want.reverse(), "{b} vs {a}");
    }
}

/// The same pairs through dpkg itself, where there is one.
#[test]
fn debian_version_order_agrees_with_dpkg() {
    if !on_path("dpkg") {
        return;
    }
    for &(a, b, want) in PAIRS {
        let op = match want {
            Ordering::Less => "lt",
            Ordering::Equal => "eq",
            Ordering::Greater => "gt",
        };
        let st = Command::new("dpkg")
            .args(["--compare-versions", a, op, b])
            .status()
            .unwrap();
        assert!(st.success(), "dpkg disagrees: {a} {op} {b}");
    }
}

fn synthetic_bzimage(version: &[u8]) -> Vec<u8> {
    let mut img = vec![0u8; 0x1400];
    img[0x1F1] = 4; // setup_sects
    img[0x1FE] = 0x55;
    img[0x1FF] = 0xAA;
    img[0x202..0x206].copy_from_slice(b"HdrS");
    img[0x206..0x208].copy_from_slice(&0x020Fu16.to_le_bytes());
    img[0x20E..0x210].copy_from_slice(&(0x0B00u16 - 0x200).to_le_bytes());
    img[0xB00..0xB00 + version.len()].copy_from_slice(version);
    img
}

#[test]
fn bzimage_header_release() {
    let img = synthetic_bzimage(
            b"7.2.13+deb14-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 7.2.13-1\0",
        );
    assert_eq!(bzimage_release(&img).unwrap(), "7.2.13+deb14-cloud-amd64");
    let own = synthetic_bzimage(b"6.19.0-rc3-eevdf+ (me@box) #7\0");
    assert_eq!(bzimage_release(&own).unwrap(), "6.19.0-rc3-eevdf+");

    let mut bad = img.clone();
    bad[0x202] = b'X';
    assert!(bzimage_release(&bad).unwrap_err().contains("HdrS"));
    let mut nul = img.clone();
    nul[0x20E..0x210].copy_from_slice(&0u16.to_le_bytes());
    assert!(bzimage_release(&nul).is_err());
    let mut past = img.clone();
    past[0x20E..0x210].copy_from_slice(&0x7000u16.to_le_bytes());
    assert!(bzimage_release(&past).unwrap_err().contains("past the end"));
    let mut empty = img.clone();
    empty[0xB00] = 0;
    assert!(bzimage_release(&empty).is_err());
    assert!(bzimage_release(b"\x7fELF\x02\x01\x01")
        .unwrap_err()
        .contains("ELF"));
    assert!(bzimage_release(&[]).is_err());
    assert!(bzimage_release(&img[..0x100]).is_err());
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("eevdf-fetch-test-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn from_path_reads_header_and_finds_config() {
    let d = scratch("from-path");
    let boot = d.join("tree/arch/x86/boot");
    fs::create_dir_all(&boot).unwrap();
    let img = synthetic_bzimage(b"6.19.0-rc3-eevdf+ (me@box) #7\0");
    fs::write(boot.join("bzImage"), &img).unwrap();

    let k = from_path(&boot.join("bzImage"), None).unwrap();
    assert_eq!(k.release, "6.19.0-rc3-eevdf+");
    assert_eq!(k.series, "6.19");
    assert_eq!(k.vmlinuz_sha256, crate::sha256_hex(&img));
    assert!(k.package.is_empty() && k.deb_sha256.is_empty());
    assert_eq!(k.config, None);

    fs::write(d.join("tree/.config"), "CONFIG_HZ=1000\n").unwrap();
    let k = from_path(&boot.join("bzImage"), None).unwrap();
    assert!(k.config.unwrap().ends_with("tree/.config"));

    fs::write(boot.join("config-6.19.0-rc3-eevdf+"), "CONFIG_HZ=250\n").unwrap();
    let k = from_path(&boot.join("bzImage"), None).unwrap();
    assert!(k.config.unwrap().ends_with("config-6.19.0-rc3-eevdf+"));

    let explicit = d.join("my.config");
    fs::write(&explicit, "CONFIG_HZ=100\n").unwrap();
    let k = from_path(&boot.join("bzImage"), Some(&explicit)).unwrap();
    assert!(k.config.unwrap().ends_with("my.config"));
    let e = from_path(&boot.join("bzImage"), Some(&d.join("nope"))).unwrap_err();
    assert!(e.message.contains("does not exist"), "{e}");

    fs::write(d.join("vmlinux"), b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
    let e = from_path(&d.join("vmlinux"), None).unwrap_err();
    assert!(e.to_string().contains("ELF"), "{e}");
    assert!(from_path(&d.join("missing"), None).is_err());
    let _ = fs::remove_dir_all(&d);
}

const SHOW: &str = "\
Package: linux-image-7.2.12+deb13-cloud-amd64
Version: 7.2.12-1~bpo13+1
Installed-Size: 15
Depends: linux-base-7.2.12+deb13-cloud-amd64 (= 7.2.12-1~bpo13+1), linux-binary-7.2.12+deb13-cloud-amd64 (= 7.2.12-1~bpo13+1)
Description: Linux 7.2.12 for x86-64 cloud
Size: 1924
SHA256: 99a5e789bb4130e99cb78bca6b5b5c19bbe065a74a04c1e62700489dfd7bdf4d

Package: linux-binary-7.2.12+deb13-cloud-amd64
Version: 7.2.12-1~bpo13+1
Installed-Size: 13476
Depends: linux-base-7.2.12+deb13-cloud-amd64 (= 7.2.12-1~bpo13+1)
Description: Linux 7.2.12 for x86-64 cloud (kernel image)
 A continuation line: with a colon.
 .
Size: 13389360
SHA256: AA6720823145E351D3C817C95FE58D89995A2BCBA4978AD2418C36A1C272F795

Package: linux-binary-7.2.9+deb13-cloud-amd64
Version: 7.2.9-1~bpo13+1
Installed-Size: 13400
Size: 13300000
SHA256: 00

Package: linux-binary-7.3.4+deb13-cloud-amd64
Version: 7.3.4-1~bpo13+1
Installed-Size: 13500
Size: 13300000
SHA256: 11
";

#[test]
fn candidates_skip_meta_and_other_series() {
    let c = candidates_from_show(SHOW, "trixie-backports", "7.2");
    let names: Vec<&str> = c.iter().map(|c| c.package.as_str()).collect();
    assert_eq!(
        names,
        [
            "linux-binary-7.2.12+deb13-cloud-amd64",
            "linux-binary-7.2.9+deb13-cloud-amd64"
        ]
    );
    assert_eq!(c[0].size, 13389360);
    assert_eq!(
        c[0].sha256,
        "aa6720823145e351d3c817c95fe58d89995a2bcba4978ad2418c36a1c272f795"
    );
    assert!(c[0].better_than(&c[1]));
    assert!(!c[1].better_than(&c[0]));

    // Same version: the package kind decides.
    let mut unsigned = c[0].clone();
    unsigned.kind = PackageKind::ImageUnsigned;
    assert!(c[0].better_than(&unsigned));
    assert!(!unsigned.better_than(&c[0]));
    // A newer version in another suite wins regardless.
    let mut sid = unsigned.clone();
    sid.version = "7.2.13-1".into();
    assert!(sid.better_than(&c[0]));
}

#[test]
fn config_companion_from_depends() {
    let rel = "7.2.13+deb14-cloud-amd64";
    assert_eq!(
        config_companion("linux-base-7.2.13+deb14-cloud-amd64 (= 7.2.13-1)", rel),
        Some((format!("linux-base-{rel}"), Some("7.2.13-1".into())))
    );
    assert_eq!(
        config_companion(
            "kmod, linux-base-7.2.13+deb14-cloud-amd64:amd64, foo (>= 1)",
            rel
        ),
        Some((format!("linux-base-{rel}"), None))
    );
    // Another release's base, or a lower bound, is not a pin.
    assert_eq!(
        config_companion("linux-base-7.2.12+deb14-cloud-amd64 (= 7.2.12-1)", rel),
        None
    );
    assert_eq!(
        config_companion("linux-base-7.2.13+deb14-cloud-amd64 (>= 7.2)", rel),
        Some((format!("linux-base-{rel}"), None))
    );
    assert_eq!(config_companion("", rel), None);
}

fn fake_cache_entry(root: &Path, release: &str, version: &str, body: &[u8]) {
    let dir = kernels_dir(root).join(release);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("vmlinuz"), body).unwrap();
    let rec = Record {
        release: release.into(),
        series: series_of(release).unwrap(),
        suite: "sid".into(),
        package: format!("linux-binary-{release}"),
        package_version: version.into(),
        deb_sha256: "00".into(),
        vmlinuz_sha256: crate::sha256_hex(body),
        config_sha256: None,
        config_package: None,
        config_package_version: None,
        config_deb_sha256: None,
    };
    fs::write(
        dir.join("kernel.json"),
        serde_json::to_string(&rec).unwrap(),
    )
    .unwrap();
}

#[test]
fn cached_picks_newest_intact_entry() {
    let root = scratch("cached");
    assert!(cached_in(&root, "7.2").is_none());
    fake_cache_entry(&root, "7.2.9+deb14-cloud-amd64", "7.2.9-1", b"old");
    fake_cache_entry(&root, "7.2.13+deb14-cloud-amd64", "7.2.13-1", b"new");
    fake_cache_entry(
        &root,
        "6.12.95+deb12-cloud-amd64",
        "6.12.95-1~bpo12+1",
        b"lts",
    );
    let k = cached_in(&root, "7.2").unwrap();
    assert_eq!(k.release, "7.2.13+deb14-cloud-amd64");
    assert_eq!(k.config, None);
    assert_eq!(
        cached_in(&root, "6.12").unwrap().package_version,
        "6.12.95-1~bpo12+1"
    );
    assert!(cached_in(&root, "6.18").is_none());
    // A damaged image is not a cached kernel.
    fs::write(
        kernels_dir(&root).join("7.2.13+deb14-cloud-amd64/vmlinuz"),
        b"truncated",
    )
    .unwrap();
    assert_eq!(
        cached_in(&root, "7.2").unwrap().release,
        "7.2.9+deb14-cloud-amd64"
    );
    assert_eq!(list_cached_in(&root).len(), 2);
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn unsupported_series_is_refused_offline() {
    let root = scratch("unsupported");
    let e = fetch_in(&root, "5.10", &mut |_| {}).unwrap_err();
    assert!(e.message.contains("5.10"));
    assert!(e.hint.contains("7.2, 6.18, 6.17, 6.16, 6.12"), "{e}");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn command_failure_names_command_and_stderr() {
    let e = run(
        Command::new("sh").args(["-c", "echo one >&2; echo two >&2; exit 3"]),
        "do something",
    )
    .unwrap_err();
    assert!(e.message.contains("`sh -c"), "{e}");
    assert!(e.message.contains("one\ntwo"), "{e}");
    assert_eq!(e.hint, "do something");
    let e = run(&mut Command::new("/nonexistent/tool"), "h").unwrap_err();
    assert!(e.message.contains("could not run"), "{e}");
    assert_eq!(tail(&"x\n".repeat(100), 3), "x\nx\nx");
}

/// A real fetch over the network into the default cache (it is
/// idempotent, so it only downloads what is not there yet):
/// `EEVDF_TEST_SERIES=7.2,6.12 cargo test -p eevdf-kernel -- --ignored real_fetch`.
#[test]
#[ignore]
fn real_fetch() {
    let root = cache_root();
    let list = std::env::var("EEVDF_TEST_SERIES").unwrap_or_else(|_| "7.2".into());
    for series in list.split(',').map(str::trim) {
        let mut log = |m: &str| eprintln!("{series}: {m}");
        let k = fetch_in(&root, series, &mut log).unwrap();
        eprintln!("{}", serde_json::to_string_pretty(&k).unwrap());
        assert_eq!(k.series, series);
        assert!(k.vmlinuz.is_file());
        assert_eq!(bzimage_release_file(&k.vmlinuz).unwrap(), k.release);
        let cfg = crate::kconfig::read_config(k.config.as_ref().unwrap()).unwrap();
        if let Err(m) = crate::kconfig::check(&cfg) {
            panic!("{}: {}", k.release, crate::kconfig::describe(&m));
        }
        let local = from_path(&k.vmlinuz, None).unwrap();
        assert_eq!(local.release, k.release);
        assert_eq!(local.vmlinuz_sha256, k.vmlinuz_sha256);
        assert_eq!(local.config, k.config);
        let again = fetch_in(&root, series, &mut log).unwrap();
        assert_eq!(again, k);
        assert_eq!(cached_in(&root, series), Some(k));
    }
}
