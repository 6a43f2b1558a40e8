//! Profile seeds: what a browser compiled of itself in an earlier session, carried into the fresh
//! profile of the next one. Firefox compiles its own JavaScript (the browser's, not the page's)
//! into the profile's `startupCache` and uses it only with the `compatibility.ini` of the same
//! build; a profile without them spends about 1.7 CPU-seconds and a second of start-up compiling it
//! again (measured on 2 cores: 5.6 against 3.9 CPU-s for a session that opens `about:blank`).
//! Nothing of a page is carried: no HTTP, shader or WebGPU pipeline cache, no storage.

use std::path::{Path, PathBuf};

/// Where one browser installation's seed is kept, and which parts of a profile it holds.
#[derive(Debug, Clone)]
pub struct ProfileSeed {
    dir: PathBuf,
    parts: &'static [&'static str],
}

impl ProfileSeed {
    /// The seed of the browser `binary` whose profiles carry `parts` (none: no seed), kept under
    /// `HARNESS_PROFILE_SEEDS`, else `$XDG_CACHE_HOME/harness/profile-seeds` or
    /// `~/.cache/harness/profile-seeds`; `None` when that variable is `off` or no folder is known.
    pub fn of(key: &str, binary: &Path, parts: &'static [&'static str]) -> Option<ProfileSeed> {
        if parts.is_empty() {
            return None;
        }
        let root = crate::plan::cache_dir("HARNESS_PROFILE_SEEDS", "profile-seeds")?;
        // One seed per installation; a new build at the same path replaces it (see `keep`).
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf()).hash(&mut h);
        Some(ProfileSeed { dir: root.join(format!("{key}-{:016x}", h.finish())), parts })
    }

    /// The folder the seed is kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether a seed has been kept.
    pub fn exists(&self) -> bool {
        self.dir.join(self.parts[0]).exists()
    }

    /// Copies the seed into `profile` (created if missing), where there is one: whether it did.
    pub fn plant(&self, profile: &Path) -> bool {
        if !self.exists() {
            return false;
        }
        let planted = std::fs::create_dir_all(profile).and_then(|_| self.parts.iter().try_for_each(|p| copy(&self.dir.join(p), &profile.join(p))));
        if let Err(e) = &planted {
            tracing::warn!("could not seed the profile {} from {}: {e}", profile.display(), self.dir.display());
        }
        planted.is_ok()
    }

    /// After the browser quit cleanly: keeps `profile`'s parts as the seed, unless the seed already
    /// holds the same build's (its last part, the version file, is the same). Two runs may keep one
    /// at once: each writes beside it and renames into place, and a half-copied seed is never read.
    pub fn keep(&self, profile: &Path) {
        let version = self.parts[self.parts.len() - 1];
        let Ok(fresh) = std::fs::read(profile.join(version)) else { return };
        if std::fs::read(self.dir.join(version)).ok().as_deref() == Some(&fresh[..]) || !self.parts.iter().all(|p| profile.join(p).exists()) {
            return;
        }
        let tmp = self.dir.with_extension(format!("new{}", std::process::id()));
        let old = self.dir.with_extension(format!("old{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let written = std::fs::create_dir_all(&tmp).and_then(|_| self.parts.iter().try_for_each(|p| copy(&profile.join(p), &tmp.join(p))));
        let kept = written.and_then(|_| {
            // A seed of another build is set aside first: a directory cannot be renamed over one.
            let _ = std::fs::rename(&self.dir, &old);
            std::fs::rename(&tmp, &self.dir)
        });
        let _ = std::fs::remove_dir_all(&tmp);
        let _ = std::fs::remove_dir_all(&old);
        if let Err(e) = kept {
            tracing::debug!("did not keep a profile seed in {}: {e}", self.dir.display());
        }
    }
}

/// Copies a file, or a folder and everything in it.
fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARTS: &[&str] = &["startupCache", "compatibility.ini"];

    fn profile(dir: &Path, build: &str, cache: &str) -> PathBuf {
        std::fs::create_dir_all(dir.join("startupCache")).unwrap();
        std::fs::write(dir.join("startupCache/scriptCache.bin"), cache).unwrap();
        std::fs::write(dir.join("compatibility.ini"), build).unwrap();
        std::fs::write(dir.join("cookies.sqlite"), "a page's").unwrap();
        dir.to_path_buf()
    }

    #[test]
    fn a_kept_seed_is_planted_in_the_next_profile_and_a_new_build_replaces_it() {
        let tmp = tempfile::tempdir().unwrap();
        let seed = ProfileSeed { dir: tmp.path().join("seeds/firefox-1"), parts: PARTS };
        let next = tmp.path().join("next");
        assert!(!seed.plant(&next), "no seed yet");
        seed.keep(&profile(&tmp.path().join("first"), "build 1", "compiled by 1"));
        assert!(seed.plant(&next));
        assert_eq!(std::fs::read_to_string(next.join("startupCache/scriptCache.bin")).unwrap(), "compiled by 1");
        assert_eq!(std::fs::read_to_string(next.join("compatibility.ini")).unwrap(), "build 1");
        assert!(!next.join("cookies.sqlite").exists(), "nothing of a page is carried");
        // The same build's seed stays as it is; another build's replaces it.
        seed.keep(&profile(&tmp.path().join("second"), "build 1", "compiled by 1 again"));
        assert_eq!(std::fs::read_to_string(seed.dir().join("startupCache/scriptCache.bin")).unwrap(), "compiled by 1");
        seed.keep(&profile(&tmp.path().join("third"), "build 2", "compiled by 2"));
        assert_eq!(std::fs::read_to_string(seed.dir().join("startupCache/scriptCache.bin")).unwrap(), "compiled by 2");
        assert_eq!(std::fs::read_dir(tmp.path().join("seeds")).unwrap().count(), 1, "nothing left beside the seed");
    }

    #[test]
    fn a_profile_without_every_part_is_not_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let seed = ProfileSeed { dir: tmp.path().join("seed"), parts: PARTS };
        let killed = profile(&tmp.path().join("killed"), "build 1", "");
        std::fs::remove_dir_all(killed.join("startupCache")).unwrap();
        seed.keep(&killed);
        assert!(!seed.dir().exists());
    }

    #[test]
    fn a_browser_whose_profiles_carry_nothing_has_no_seed() {
        assert!(ProfileSeed::of("chrome", Path::new("/usr/bin/chromium"), &[]).is_none());
    }
}
