//! The precompiled-component cache: an artifact is written on first use and loaded
//! afterwards; an artifact this host did not write (its digest does not match) is never
//! loaded, the component is compiled again instead.

use crate::support::{corpus, scratch, test_component};
use coder_eval::runtime::{ComponentCache, harness};

#[test]
fn artifacts_are_written_reused_and_verified() {
    let dir = scratch("cache");
    let bytes = std::fs::read(test_component("test_tagger.wasm")).unwrap();

    let cold = ComponentCache::for_harnesses(Some(dir.clone()));
    assert!(!cold.is_cached_on_disk(&bytes));
    let loaded = cold.load_bytes("tagger", &bytes).unwrap();
    harness::check(&loaded).unwrap();
    assert!(cold.is_cached_on_disk(&bytes));
    let artifacts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    assert_eq!(artifacts.len(), 1);

    // A second cache (a new process, in effect) loads the artifact and it works. It is
    // really loaded, not compiled again: a compile rewrites the artifact and its digest
    // (an atomic rename: new inodes), so their inodes stay the same.
    use std::os::unix::fs::MetadataExt;
    let inodes = || {
        let digest = artifacts[0].with_extension("cwasm.sha256");
        [&artifacts[0], &digest].map(|p| std::fs::metadata(p).unwrap().ino())
    };
    let before = inodes();
    let warm = ComponentCache::for_harnesses(Some(dir.clone()));
    let loaded = warm.load_bytes("tagger", &bytes).unwrap();
    assert_eq!(
        inodes(),
        before,
        "the warm cache compiled the component again"
    );
    let mut reducer = harness::Reducer::new(&loaded, Default::default()).unwrap();
    let line = std::fs::read_to_string(corpus("live/claude/hello.jsonl")).unwrap();
    let events = reducer
        .feed(line.lines().nth(2).unwrap().as_bytes(), 0)
        .unwrap();
    assert!(format!("{events:?}").contains("tagged:Write"));

    // Tampering: the artifact no longer matches its digest, so it is not loaded; the
    // component is compiled afresh and the artifact rewritten.
    let artifact = &artifacts[0];
    let mut corrupted = std::fs::read(artifact).unwrap();
    let mid = corrupted.len() / 2;
    corrupted[mid] ^= 0xff;
    std::fs::write(artifact, &corrupted).unwrap();
    let fresh = ComponentCache::for_harnesses(Some(dir.clone()));
    let loaded = fresh.load_bytes("tagger", &bytes).unwrap();
    harness::check(&loaded).unwrap();
    assert_ne!(
        std::fs::read(artifact).unwrap(),
        corrupted,
        "the artifact was rewritten"
    );

    // The graders' engine (fuel metered) compiles the same bytes to another artifact in
    // the same folder; neither cache loads the other's.
    let graders = ComponentCache::new(Some(dir.clone()));
    assert!(!graders.is_cached_on_disk(&bytes));
    graders.load_bytes("tagger", &bytes).unwrap();
    assert!(graders.is_cached_on_disk(&bytes));
    let count = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "cwasm")
        })
        .count();
    assert_eq!(count, 2, "one artifact per engine");
}

/// Trial of issue 10 (F3): an artifact copied with its digest file under another
/// component's key was loaded as that component (the panicker ran as the tagger). The
/// digest now seals the key with the artifact: the pair is valid under its own key only.
#[test]
fn an_artifact_moved_under_another_key_is_compiled_again() {
    let dir = scratch("cache-swap");
    let tagger = std::fs::read(test_component("test_tagger.wasm")).unwrap();
    let panicker = std::fs::read(test_component("test_panicker.wasm")).unwrap();
    let cache = ComponentCache::for_harnesses(Some(dir.clone()));
    cache.load_bytes("tagger", &tagger).unwrap();
    let artifacts = || -> std::collections::BTreeSet<std::path::PathBuf> {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
            .collect()
    };
    let tagger_artifact = artifacts().into_iter().next().unwrap();
    cache.load_bytes("panicker", &panicker).unwrap();
    let panicker_artifact = artifacts()
        .into_iter()
        .find(|p| *p != tagger_artifact)
        .unwrap();
    // The panicker's artifact and digest, under the tagger's key.
    std::fs::copy(&panicker_artifact, &tagger_artifact).unwrap();
    std::fs::copy(
        panicker_artifact.with_extension("cwasm.sha256"),
        tagger_artifact.with_extension("cwasm.sha256"),
    )
    .unwrap();
    let fresh = ComponentCache::for_harnesses(Some(dir.clone()));
    let loaded = fresh.load_bytes("tagger", &tagger).unwrap();
    let mut reducer = harness::Reducer::new(&loaded, Default::default()).unwrap();
    let line = std::fs::read_to_string(corpus("live/claude/hello.jsonl")).unwrap();
    let events = reducer
        .feed(line.lines().nth(2).unwrap().as_bytes(), 0)
        .expect("the tagger, not the panicker");
    assert!(format!("{events:?}").contains("tagged:Write"));
    assert_ne!(
        std::fs::read(&tagger_artifact).unwrap(),
        std::fs::read(&panicker_artifact).unwrap(),
        "the tagger's artifact was compiled again"
    );
    // Only its owner can write the folder (an artifact is native code the host runs).
    use std::os::unix::fs::PermissionsExt;
    let fresh_dir = dir.join("made-by-the-cache");
    ComponentCache::for_harnesses(Some(fresh_dir.clone()));
    assert_eq!(
        std::fs::metadata(&fresh_dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
}
