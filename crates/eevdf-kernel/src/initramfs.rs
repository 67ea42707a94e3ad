//! A reproducible initramfs: newc cpio with sorted entries, mtime 0,
//! uid/gid 0 and inode numbers by position, gzip with mtime 0 and no
//! file name, so identical inputs give identical bytes (and, under QEMU
//! `-icount`, identical runs).

use std::collections::BTreeMap;
use std::io::{self, Write};

use cpio::newc::{Builder, ModeFileType};
use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};

/// One archive member.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Dir,
    File {
        mode: u32,
        data: Vec<u8>,
    },
    /// A character device (major, minor): the kernel opens `/dev/console`
    /// for PID 1 before anything can mount devtmpfs.
    CharDev(u32, u32),
}

/// The archive being built, keyed by path (sorted, so order never depends
/// on how it was filled).
#[derive(Clone, Debug, Default)]
pub struct Initramfs {
    nodes: BTreeMap<String, Node>,
}

impl Initramfs {
    /// An archive with the directories and the console node every guest needs.
    pub fn new() -> Self {
        let mut fs = Initramfs::default();
        for d in ["dev", "proc", "sys", "tmp", "eevdf"] {
            fs.dir(d);
        }
        fs.nodes.insert("dev/console".into(), Node::CharDev(5, 1));
        fs
    }

    /// Adds a directory (and its parents).
    pub fn dir(&mut self, path: &str) {
        let mut at = String::new();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            if !at.is_empty() {
                at.push('/');
            }
            at.push_str(part);
            self.nodes.entry(at.clone()).or_insert(Node::Dir);
        }
    }

    /// Adds a file with permission bits `mode` (e.g. 0o755), and its parents.
    pub fn file(&mut self, path: &str, mode: u32, data: Vec<u8>) {
        let path = path.trim_start_matches('/');
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.nodes
            .insert(path.to_string(), Node::File { mode, data });
    }

    /// The uncompressed newc archive.
    pub fn cpio(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        for (i, (path, node)) in self.nodes.iter().enumerate() {
            let b = Builder::new(path).ino(i as u32 + 1).uid(0).gid(0).mtime(0);
            let (b, data): (Builder, &[u8]) = match node {
                Node::Dir => (
                    b.mode(0o755)
                        .set_mode_file_type(ModeFileType::Directory)
                        .nlink(2),
                    &[],
                ),
                Node::File { mode, data } => (
                    b.mode(mode & 0o7777)
                        .set_mode_file_type(ModeFileType::Regular),
                    data,
                ),
                Node::CharDev(major, minor) => (
                    b.mode(0o600)
                        .set_mode_file_type(ModeFileType::Char)
                        .rdev_major(*major)
                        .rdev_minor(*minor),
                    &[],
                ),
            };
            let size = u32::try_from(data.len())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file over 4 GiB"))?;
            let mut w = b.write(&mut out, size);
            w.write_all(data)?;
            w.finish()?;
        }
        cpio::newc::trailer(&mut out)?;
        Ok(out)
    }

    /// The gzip-compressed archive, as the kernel's `-initrd` takes it.
    pub fn gzip(&self) -> io::Result<Vec<u8>> {
        let cpio = self.cpio()?;
        // GzBuilder writes mtime 0 and no name unless told otherwise;
        // said explicitly because reproducibility depends on it.
        let mut enc: GzEncoder<Vec<u8>> = GzBuilder::new()
            .mtime(0)
            .write(Vec::new(), Compression::new(6));
        enc.write_all(&cpio)?;
        enc.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(order: &[(&str, &[u8])]) -> Vec<u8> {
        let mut fs = Initramfs::new();
        for (p, d) in order {
            fs.file(p, 0o644, d.to_vec());
        }
        fs.gzip().unwrap()
    }

    #[test]
    fn two_builds_are_byte_identical_whatever_the_insertion_order() {
        let a = build(&[("init", b"\x7fELF"), ("eevdf/scenario.txt", b"x\n")]);
        let b = build(&[("eevdf/scenario.txt", b"x\n"), ("init", b"\x7fELF")]);
        assert_eq!(a, b);
        assert_ne!(
            a,
            build(&[("init", b"\x7fELF"), ("eevdf/scenario.txt", b"y\n")])
        );
        // gzip header: magic, deflate, no flags, mtime 0.
        assert_eq!(&a[..8], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn the_archive_reads_back_with_sorted_zeroed_entries() {
        let mut fs = Initramfs::new();
        fs.file("/init", 0o755, b"bin".to_vec());
        fs.file("eevdf/options", 0o644, b"trace=0\n".to_vec());
        let cpio = fs.cpio().unwrap();
        let mut rest: &[u8] = &cpio;
        let mut names = Vec::new();
        loop {
            let r = cpio::newc::Reader::new(rest).unwrap();
            if r.entry().is_trailer() {
                break;
            }
            let e = r.entry();
            assert_eq!((e.mtime(), e.uid(), e.gid()), (0, 0, 0));
            names.push((
                e.name().to_string(),
                e.mode(),
                e.rdev_major(),
                e.file_size(),
            ));
            rest = r.finish().unwrap();
        }
        let got: Vec<&str> = names.iter().map(|n| n.0.as_str()).collect();
        assert_eq!(
            got,
            [
                "dev",
                "dev/console",
                "eevdf",
                "eevdf/options",
                "init",
                "proc",
                "sys",
                "tmp"
            ]
        );
        assert_eq!(names[1].1, 0o020600);
        assert_eq!(names[1].2, 5);
        assert_eq!((names[4].1, names[4].3), (0o100755, 3));
    }
}
