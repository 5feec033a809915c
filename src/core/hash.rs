//! SHA-256 as lowercase hex: the one way rubricate names content (snapshots, prompts,
//! datasets, cache keys).

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// The SHA-256 digest of some bytes.
pub fn sha256(bytes: impl AsRef<[u8]>) -> [u8; 32] {
    Sha256::digest(bytes.as_ref()).into()
}

/// SHA-256 of some bytes (a text's UTF-8), as 64 lowercase hex digits.
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    hex(&sha256(bytes))
}

/// SHA-256 of a file's bytes, read in chunks (a dataset can be larger than memory).
pub fn sha256_file_hex(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// Bytes as lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() -> std::io::Result<()> {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex("abc"), abc);
        assert_eq!(hex(&[0, 15, 255]), "000fff");
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("f");
        std::fs::write(&file, "abc")?;
        assert_eq!(sha256_file_hex(&file)?, abc);
        Ok(())
    }
}
