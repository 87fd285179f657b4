//! Tests of `sandbox.docker:` loading and checks.

use super::*;

fn spec(yaml: &str) -> Result<DockerSpec, serde_yaml_ng::Error> {
    serde_yaml_ng::from_str(yaml)
}

#[test]
fn defaults_are_coder_evals() {
    let s = spec("{}").unwrap();
    assert_eq!(s, DockerSpec::default());
    assert_eq!(s.network(), DockerNetwork::Bridge);
    assert!(s.agent_isolation);
    assert!(s.env_passthrough.iter().any(|n| n == "HOME"));
    let dir = std::env::temp_dir();
    assert_eq!(
        s.image_source(&dir, "t").unwrap(),
        ImageSource::Local(DEFAULT_IMAGE.into())
    );
}

#[test]
fn every_documented_field_loads() {
    let s = spec(
        "image: my:tag\ndockerfile_path: ./env/Dockerfile\nbuild: {args: {A: b}, secrets: [], extra_args: [--target, rt], buildkit: false}\nnetwork: none\nworking_dir: /app\nenv_passthrough: [X]\nenv_passthrough_extra: [Y]\nextra_mounts: []\nagent_isolation: false\n",
    )
    .unwrap();
    assert_eq!(s.network().network_mode(), "none");
    assert_eq!(s.passthrough_names(), ["X", "Y"]);
    assert!(
        spec("network: bridge")
            .unwrap()
            .network()
            .reaches_host_loopback()
    );
    assert!(
        spec("network: host")
            .unwrap()
            .network()
            .reaches_host_loopback()
    );
}

#[test]
fn unknown_fields_and_values_are_refused() {
    let err = spec("imagee: x").unwrap_err().to_string();
    assert!(err.contains("unknown field `imagee`"), "{err}");
    let llm = spec("network: llm_only").unwrap().network();
    assert_eq!((llm.network_mode(), llm.as_str()), ("none", "llm_only"));
    assert!(!llm.reaches_host_loopback());
    let err = spec("network: llm").unwrap_err().to_string();
    assert!(err.contains("unknown variant `llm`"), "{err}");
    let err = spec("build: {arg: {}}").unwrap_err().to_string();
    assert!(err.contains("unknown field `arg`"), "{err}");
}

#[test]
fn dockerfile_path_is_checked_against_the_task_folder() {
    let root = std::env::temp_dir().join(format!("ce-docker-spec-{}", std::process::id()));
    let task = root.join("task");
    std::fs::create_dir_all(task.join("env")).unwrap();
    std::fs::write(task.join("env/Dockerfile"), "FROM x\n").unwrap();
    std::fs::write(root.join("Dockerfile"), "FROM x\n").unwrap();
    let with = |p: &str| DockerSpec {
        dockerfile_path: Some(p.into()),
        ..DockerSpec::default()
    };
    match with("./env/Dockerfile")
        .image_source(&task, "My/Row 1")
        .unwrap()
    {
        ImageSource::Build { tag, context, .. } => {
            assert_eq!(tag, "coder-eval-task-my-row-1:built");
            assert!(context.ends_with("task/env"));
        }
        other => panic!("{other:?}"),
    }
    let err = with("env/Nope")
        .validate(&task, "t")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("sandbox.docker.dockerfile_path: ") && err.ends_with("does not exist"),
        "{err}"
    );
    let err = with("../Dockerfile")
        .validate(&task, "t")
        .unwrap_err()
        .to_string();
    assert!(err.contains("leaves the task folder"), "{err}");
    let abs = root.join("Dockerfile").display().to_string();
    let err = with(&abs).validate(&task, "t").unwrap_err().to_string();
    assert!(err.contains("leaves the task folder"), "{err}");
    std::os::unix::fs::symlink(root.join("Dockerfile"), task.join("link")).unwrap();
    let err = with("link").validate(&task, "t").unwrap_err().to_string();
    assert!(err.contains("leaves the task folder"), "{err}");
    let mut s = with("env/Dockerfile");
    s.build.secrets = vec!["id=a,env=B".into()];
    let err = s.validate(&task, "t").unwrap_err().to_string();
    assert!(
        err.starts_with("sandbox.docker.build.secrets: needs BuildKit"),
        "{err}"
    );
    let mut s = with("env/Dockerfile");
    s.build.extra_args = vec!["--squash".into()];
    let err = s.validate(&task, "t").unwrap_err().to_string();
    assert!(err.contains("\"--squash\" is not supported"), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn working_dir_mounts_and_names() {
    let dir = std::env::temp_dir();
    let with_wd = |w: &str| DockerSpec {
        working_dir: Some(w.into()),
        ..DockerSpec::default()
    };
    assert!(with_wd("/app").validate(&dir, "t").is_ok());
    assert!(with_wd("auto").validate(&dir, "t").is_ok());
    for bad in ["app", "/", "/work", "/work/agent", "/a/../.."] {
        let err = with_wd(bad).validate(&dir, "t").unwrap_err().to_string();
        assert!(err.starts_with("sandbox.docker.working_dir: "), "{err}");
    }
    let mounts = |m: &str| DockerSpec {
        extra_mounts: vec![m.into()],
        ..DockerSpec::default()
    };
    let ok = mounts(&format!("{}:/data:ro", dir.display()))
        .extra_mounts(&dir)
        .unwrap();
    assert!(ok[0].read_only);
    for bad in ["x", "/nope-nope:/d", "/tmp:rel", "/tmp:/d:rx"] {
        let err = mounts(bad).validate(&dir, "t").unwrap_err().to_string();
        assert!(err.starts_with("sandbox.docker.extra_mounts: "), "{err}");
    }
    let s = DockerSpec {
        env_passthrough_extra: vec!["A-B".into()],
        ..DockerSpec::default()
    };
    let err = s.validate(&dir, "t").unwrap_err().to_string();
    assert_eq!(
        err,
        "sandbox.docker.env_passthrough_extra: \"A-B\" is not an environment variable name"
    );
}

#[test]
fn env_expansion_follows_expandvars() {
    // SAFETY: single-threaded use of a variable no other test reads.
    unsafe { std::env::set_var("CE_DOCKER_SPEC_V", "val") };
    assert_eq!(
        expand_env("a/$CE_DOCKER_SPEC_V/${CE_DOCKER_SPEC_V}x"),
        "a/val/valx"
    );
    assert_eq!(
        expand_env("$CE_DOCKER_UNSET_V/${CE_DOCKER_UNSET_V}"),
        "$CE_DOCKER_UNSET_V/${CE_DOCKER_UNSET_V}"
    );
    assert_eq!(expand_env("cost $ 5 ${"), "cost $ 5 ${");
}
