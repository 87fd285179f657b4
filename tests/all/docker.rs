//! `driver: docker` against a real daemon and the local base image that
//! `scripts/docker-setup.sh` makes (coder-eval-base:local; `CODER_EVAL_TEST_DOCKER_IMAGE`
//! names another, e.g. its busybox variant). Each test says why and returns early when no
//! daemon answers or the image is missing.

use crate::support::{root, scratch};
use coder_eval::sandbox::docker::{
    self, DockerError, DockerExec, DockerLimits, DockerNetwork, DockerSandbox, DockerSpec,
    ExecRequest, SandboxRequest,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The test's folders: a task folder, a workspace and a home.
struct Dirs {
    task: PathBuf,
    workspace: PathBuf,
    home: PathBuf,
}

fn dirs(name: &str) -> Dirs {
    let base = scratch(&format!("docker-{name}"));
    let d = Dirs {
        task: base.join("task"),
        workspace: base.join("workspace"),
        home: base.join("home"),
    };
    for p in [&d.task, &d.workspace, &d.home] {
        std::fs::create_dir_all(p).unwrap();
    }
    d
}

fn request(d: &Dirs, read_only: Vec<PathBuf>, limits: DockerLimits) -> SandboxRequest {
    SandboxRequest {
        task_id: "docker-test".into(),
        task_dir: d.task.clone(),
        workspace: d.workspace.clone(),
        home: d.home.clone(),
        read_only,
        limits,
    }
}

/// The host's `node` and the pinned agent CLIs, as a run would mount them.
fn cli_mounts() -> Vec<PathBuf> {
    let mut paths = docker::host_node_paths();
    let clis = root().join("harnesses/node_modules");
    if clis.is_dir() {
        paths.push(clis);
    }
    paths
}

/// The base image the tests run.
pub(crate) fn base_image() -> String {
    std::env::var("CODER_EVAL_TEST_DOCKER_IMAGE")
        .unwrap_or_else(|_| docker::spec::DEFAULT_IMAGE.to_string())
}

/// The default spec, on [`base_image`].
fn base_spec() -> DockerSpec {
    DockerSpec {
        image: Some(base_image()),
        ..DockerSpec::default()
    }
}

/// Whether the daemon and the base image are here; prints why not.
pub(crate) async fn docker_ready(test: &str) -> bool {
    let client = match docker::connect().await {
        Ok((client, _)) => client,
        Err(e) => {
            eprintln!("skipped {test}: {e} (run scripts/docker-setup.sh)");
            return false;
        }
    };
    if client.inspect_image(&base_image()).await.is_err() {
        eprintln!(
            "skipped {test}: no image {} (run scripts/docker-setup.sh)",
            base_image()
        );
        return false;
    }
    true
}

fn env(d: &Dirs) -> Vec<(String, String)> {
    vec![
        (
            "PATH".into(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
        ),
        ("HOME".into(), d.home.display().to_string()),
    ]
}

fn sh(d: &Dirs, script: &str) -> ExecRequest {
    ExecRequest {
        argv: vec!["sh".into(), "-c".into(), script.into()],
        env: env(d),
        cwd: d.workspace.clone(),
        stdin: None,
    }
}

async fn run(sandbox: &DockerSandbox, req: ExecRequest) -> (String, String, i64) {
    let (out, err, code) = sandbox.exec(req).await.unwrap().output().await.unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        code,
    )
}

async fn container_exists(id: &str) -> bool {
    let (client, _) = docker::connect().await.unwrap();
    client.inspect_container(id, None).await.is_ok()
}

#[tokio::test]
async fn exec_streams_stdout_stderr_stdin_and_exit_code() {
    if !docker_ready("exec_streams_stdout_stderr_stdin_and_exit_code").await {
        return;
    }
    let d = dirs("exec");
    let started = Instant::now();
    let sandbox =
        DockerSandbox::prepare(&base_spec(), &request(&d, vec![], DockerLimits::default()))
            .await
            .unwrap();
    let create_ms = started.elapsed().as_millis();
    let (out, err, code) = run(&sandbox, sh(&d, "echo hi; echo err >&2; exit 3")).await;
    assert_eq!((out.as_str(), err.as_str(), code), ("hi\n", "err\n", 3));

    let mut req = sh(&d, "cat; echo; pwd; id -u");
    req.stdin = Some(b"the prompt".to_vec());
    let (out, _, code) = run(&sandbox, req).await;
    let uid = std::fs::metadata(&d.workspace)
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap();
    assert_eq!(
        out,
        format!("the prompt\n{}\n{uid}\n", d.workspace.display())
    );
    assert_eq!(code, 0);

    // What the command writes in the workspace is on the host, owned like the workspace.
    run(&sandbox, sh(&d, "echo made > made.txt")).await;
    assert_eq!(
        std::fs::read_to_string(d.workspace.join("made.txt")).unwrap(),
        "made\n"
    );

    // A killed command reports 128 + the signal.
    let (_, _, code) = run(&sandbox, sh(&d, "kill -9 $$")).await;
    assert_eq!(code, 137);

    let n = 10;
    let t = Instant::now();
    for _ in 0..n {
        run(&sandbox, sh(&d, "true")).await;
    }
    eprintln!(
        "timing: container create+start {create_ms} ms, exec round trip {} ms per call",
        t.elapsed().as_millis() / n
    );
    sandbox.remove().await.unwrap();
}

#[tokio::test]
async fn host_node_and_clis_run_inside_through_the_mounts() {
    if !docker_ready("host_node_and_clis_run_inside_through_the_mounts").await {
        return;
    }
    let d = dirs("node");
    let sandbox = DockerSandbox::prepare(
        &base_spec(),
        &request(&d, cli_mounts(), DockerLimits::default()),
    )
    .await
    .unwrap();
    let script = "const fs=require('fs');fs.writeFileSync('from-node.txt',process.version);console.log(process.version, fs.existsSync(process.env.HOME))";
    let req = ExecRequest {
        argv: vec!["node".into(), "-e".into(), script.into()],
        env: env(&d),
        cwd: d.workspace.clone(),
        stdin: None,
    };
    let (out, err, code) = run(&sandbox, req).await;
    assert_eq!(code, 0, "{err}");
    let host_version = std::process::Command::new("node")
        .arg("--version")
        .output()
        .unwrap();
    let host_version = String::from_utf8(host_version.stdout).unwrap();
    assert_eq!(out, format!("{} true\n", host_version.trim()));
    assert_eq!(
        std::fs::read_to_string(d.workspace.join("from-node.txt")).unwrap(),
        host_version.trim()
    );
    // The pinned agent CLIs start (their own --version), when installed.
    let claude = root().join("harnesses/node_modules/.bin/claude");
    if claude.exists() {
        let req = ExecRequest {
            argv: vec![claude.display().to_string(), "--version".into()],
            env: env(&d),
            cwd: d.workspace.clone(),
            stdin: None,
        };
        let (out, err, code) = run(&sandbox, req).await;
        assert_eq!(code, 0, "claude --version in the container: {err}");
        assert!(out.contains("Claude Code"), "{out}");
    } else {
        eprintln!(
            "harnesses/node_modules has no claude (scripts/setup.sh installs it): only node ran"
        );
    }
    sandbox.remove().await.unwrap();
}

#[tokio::test]
async fn limits_are_applied_to_the_container() {
    if !docker_ready("limits_are_applied_to_the_container").await {
        return;
    }
    let d = dirs("limits");
    let limits = DockerLimits {
        max_memory_mb: Some(256),
        max_cpus: Some(0.5),
        max_pids: Some(24),
    };
    let sandbox = DockerSandbox::prepare(&base_spec(), &request(&d, vec![], limits))
        .await
        .unwrap();
    let info = sandbox
        .client()
        .inspect_container(sandbox.id(), None)
        .await
        .unwrap();
    let host = info.host_config.unwrap();
    assert_eq!(host.memory, Some(256 * 1024 * 1024));
    assert_eq!(host.memory_swap, Some(256 * 1024 * 1024));
    assert_eq!(host.nano_cpus, Some(500_000_000));
    assert_eq!(host.pids_limit, Some(24));
    assert_eq!(host.cap_drop, Some(vec!["ALL".to_string()]));
    // The pids limit binds: 40 background sleeps cannot all start (the shell gives up at
    // the first fork refused). The stop then ends those that did.
    let mut exec = sandbox
        .exec(sh(
            &d,
            "i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i+1)); done",
        ))
        .await
        .unwrap();
    let (_, err, code) = exec.output().await.unwrap();
    let err = String::from_utf8_lossy(&err);
    assert!(code != 0 && err.contains("fork"), "{code} {err}");
    let stopped = exec.stop(Duration::from_secs(1)).await.unwrap();
    assert!((10..24).contains(&stopped), "{stopped} sleeps had started");
    let (_, err, code) = run(&sandbox, sh(&d, "sleep 0.1 & sleep 0.1 & wait")).await;
    assert_eq!(code, 0, "{err}");
    sandbox.remove().await.unwrap();
}

/// A server on the host's loopback that greets each connection; its port.
async fn greeter() -> u16 {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let _ = conn.write_all(b"hello from the host\n").await;
        }
    });
    port
}

/// What `node` in the container reads from `127.0.0.1:port`, or the connection's error.
async fn probe(sandbox: &DockerSandbox, d: &Dirs, port: u16) -> String {
    let script = format!(
        "require('net').connect({port},'127.0.0.1').on('data',b=>{{console.log(String(b).trim());process.exit(0)}}).on('error',e=>{{console.log(e.code);process.exit(1)}}).on('end',()=>{{console.log('closed');process.exit(1)}})"
    );
    let req = ExecRequest {
        argv: vec!["node".into(), "-e".into(), script],
        env: env(d),
        cwd: d.workspace.clone(),
        stdin: None,
    };
    let (out, err, _) = run(sandbox, req).await;
    format!(
        "{}{}",
        out.trim(),
        if out.is_empty() { err } else { String::new() }
    )
}

#[tokio::test]
async fn network_none_reaches_only_forwarded_host_ports_bridge_reaches_the_host() {
    if !docker_ready("network_none_reaches_only_forwarded_host_ports_bridge_reaches_the_host").await
    {
        return;
    }
    let (model, other) = (greeter().await, greeter().await);
    let sandbox_on = |network: DockerNetwork, name: &str| {
        let d = dirs(name);
        let spec = DockerSpec {
            network: Some(network),
            ..base_spec()
        };
        async move {
            let sandbox = DockerSandbox::prepare(
                &spec,
                &request(&d, docker::host_node_paths(), DockerLimits::default()),
            )
            .await
            .unwrap();
            (sandbox, d)
        }
    };
    let hello = "hello from the host";

    let (sealed, d) = sandbox_on(DockerNetwork::None, "net-none").await;
    assert_eq!(probe(&sealed, &d, model).await, "ECONNREFUSED");
    sealed.forward_host_port(model).unwrap();
    assert_eq!(probe(&sealed, &d, model).await, hello);
    assert_eq!(
        probe(&sealed, &d, other).await,
        "ECONNREFUSED",
        "only the forwarded port"
    );
    sealed.remove().await.unwrap();

    let (open, d) = sandbox_on(DockerNetwork::Bridge, "net-bridge").await;
    assert_eq!(probe(&open, &d, model).await, hello);
    assert_eq!(probe(&open, &d, other).await, hello);
    open.forward_host_port(model).unwrap();
    open.remove().await.unwrap();
}

/// Starts a command that detaches two sleeps (`setsid`, and `nohup` where the image has
/// it: busybox has none) and runs a third.
async fn detached_sleeps(sandbox: &DockerSandbox, d: &Dirs) -> DockerExec {
    let mut exec = sandbox
        .exec(sh(
            d,
            "setsid sleep 300 & $(command -v nohup) sleep 301 >/dev/null 2>&1 & echo started; exec sleep 302",
        ))
        .await
        .unwrap();
    let mut out = exec.stdout.take().unwrap();
    let mut buf = [0u8; 8];
    use tokio::io::AsyncReadExt;
    let n = out.read(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"started\n");
    tokio::time::sleep(Duration::from_millis(300)).await;
    exec
}

async fn sleeps_left(sandbox: &DockerSandbox, d: &Dirs) -> String {
    let (out, _, _) = run(
        sandbox,
        sh(d, "for p in /proc/[0-9]*; do c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null); case \"$c\" in 'sleep 30'*) echo \"$c\";; esac; done"),
    )
    .await;
    out
}

#[tokio::test]
async fn stop_kills_everything_the_exec_started() {
    if !docker_ready("stop_kills_everything_the_exec_started").await {
        return;
    }
    let d = dirs("stop");
    let sandbox =
        DockerSandbox::prepare(&base_spec(), &request(&d, vec![], DockerLimits::default()))
            .await
            .unwrap();
    assert!(
        sandbox.host_sees_processes(),
        "a local daemon's processes are the host's"
    );

    // Through the host's process table.
    let exec = detached_sleeps(&sandbox, &d).await;
    assert_eq!(sleeps_left(&sandbox, &d).await.lines().count(), 3);
    let t = Instant::now();
    let found = exec.stop(Duration::from_secs(2)).await.unwrap();
    assert!(found >= 3, "found {found}");
    assert_eq!(
        exec.wait().await.unwrap(),
        143,
        "sleep 302 ended by SIGTERM"
    );
    assert_eq!(sleeps_left(&sandbox, &d).await, "");
    eprintln!("timing: stop of 3 processes {} ms", t.elapsed().as_millis());
    assert!(coder_eval::process::marked(exec.mark()).is_empty());

    // After the command itself ended, the processes it detached are still found.
    let (out, _, code) = run(&sandbox, sh(&d, "setsid sleep 303 & echo $!")).await;
    assert_eq!(code, 0);
    assert!(!out.is_empty());
    let exec = sandbox
        .exec(sh(&d, "setsid sleep 304 >/dev/null 2>&1 & exit 0"))
        .await
        .unwrap();
    assert_eq!(exec.wait().await.unwrap(), 0);
    assert_eq!(exec.stop(Duration::from_secs(1)).await.unwrap(), 1);

    // By the script in the container (a daemon whose processes the host cannot see).
    let exec = detached_sleeps(&sandbox, &d).await;
    let found = exec
        .stop_in_container(Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(found, 3);
    assert_eq!(exec.wait().await.unwrap(), 143);
    let left = sleeps_left(&sandbox, &d).await;
    assert_eq!(
        left.trim(),
        "sleep 303",
        "only the other exec's sleep is left"
    );

    // Removal ends the rest.
    let id = sandbox.id().to_string();
    sandbox.remove().await.unwrap();
    assert!(!container_exists(&id).await);
}

#[tokio::test]
async fn the_container_is_removed_when_dropped() {
    if !docker_ready("the_container_is_removed_when_dropped").await {
        return;
    }
    let d = dirs("drop");
    let sandbox =
        DockerSandbox::prepare(&base_spec(), &request(&d, vec![], DockerLimits::default()))
            .await
            .unwrap();
    let id = sandbox.id().to_string();
    let _running = sandbox.exec(sh(&d, "sleep 600")).await.unwrap();
    assert!(container_exists(&id).await);
    drop(sandbox);
    assert!(!container_exists(&id).await, "dropped, so removed");
    // Leftovers of a dead host are found by their label; a live host's are kept.
    let (client, _) = docker::connect().await.unwrap();
    let live = DockerSandbox::prepare(&base_spec(), &request(&d, vec![], DockerLimits::default()))
        .await
        .unwrap();
    let orphan = client
        .create_container(
            None::<bollard::query_parameters::CreateContainerOptions>,
            bollard::models::ContainerCreateBody {
                image: Some(base_image()),
                cmd: Some(vec!["true".into()]),
                // A pid above any pid_max: its host is gone.
                labels: Some([(docker::LABEL.to_string(), "999999999".to_string())].into()),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id;
    let removed = docker::remove_leftovers(&client).await.unwrap();
    assert!(removed.contains(&orphan), "{removed:?}");
    assert!(!removed.contains(&live.id().to_string()));
    assert!(!container_exists(&orphan).await);
    assert!(container_exists(live.id()).await);
    live.remove().await.unwrap();
}

#[tokio::test]
async fn missing_image_and_missing_daemon_are_clear_errors() {
    let err = docker::connect_at(Path::new("/nonexistent/docker.sock"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no Docker daemon at /nonexistent/docker.sock: start dockerd or use driver: tempdir"
    );
    if !docker_ready("missing_image_and_missing_daemon_are_clear_errors").await {
        return;
    }
    let d = dirs("noimage");
    let spec = DockerSpec {
        image: Some("coder-eval-no-such-image:1".into()),
        ..base_spec()
    };
    let err = DockerSandbox::prepare(&spec, &request(&d, vec![], DockerLimits::default()))
        .await
        .unwrap_err();
    assert!(matches!(err, DockerError::ImageMissing { .. }));
    assert!(
        err.to_string().starts_with(
            "image coder-eval-no-such-image:1 is not on this machine and cannot be pulled here"
        ),
        "{err}"
    );
    let spec = DockerSpec {
        dockerfile_path: Some("nope/Dockerfile".into()),
        ..base_spec()
    };
    let err = DockerSandbox::prepare(&spec, &request(&d, vec![], DockerLimits::default()))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("sandbox.docker.dockerfile_path: "), "{err}");
}

#[tokio::test]
async fn a_task_dockerfile_is_built_and_used() {
    if !docker_ready("a_task_dockerfile_is_built_and_used").await {
        return;
    }
    let d = dirs("build");
    std::fs::create_dir_all(d.task.join("environment")).unwrap();
    std::fs::write(d.task.join("environment/input.txt"), "copied\n").unwrap();
    std::fs::write(
        d.task.join("environment/Dockerfile"),
        format!(
            "FROM {}\nARG GREETING\nRUN touch /marker && echo \"$GREETING\" > /greeting\nCOPY input.txt /input.txt\n",
            base_image()
        ),
    )
    .unwrap();
    let mut spec = DockerSpec {
        dockerfile_path: Some("./environment/Dockerfile".into()),
        ..base_spec()
    };
    spec.build.args.insert("GREETING".into(), "hello".into());
    let t = Instant::now();
    let sandbox = DockerSandbox::prepare(&spec, &request(&d, vec![], DockerLimits::default()))
        .await
        .unwrap();
    eprintln!(
        "timing: prepare with a Dockerfile build {} ms",
        t.elapsed().as_millis()
    );
    assert_eq!(sandbox.image().image, "coder-eval-task-docker-test:built");
    let (out, _, code) = run(
        &sandbox,
        sh(&d, "test -e /marker && cat /greeting /input.txt"),
    )
    .await;
    assert_eq!((out.as_str(), code), ("hello\ncopied\n", 0));
    sandbox.remove().await.unwrap();

    // A failing build is an error carrying the build's log.
    std::fs::write(
        d.task.join("environment/Dockerfile"),
        format!("FROM {}\nRUN echo about to fail && exit 7\n", base_image()),
    )
    .unwrap();
    match DockerSandbox::prepare(&spec, &request(&d, vec![], DockerLimits::default())).await {
        Err(DockerError::Build { tag, message, log }) => {
            assert_eq!(tag, "coder-eval-task-docker-test:built");
            assert!(message.contains("returned a non-zero code: 7"), "{message}");
            assert!(log.contains("about to fail"), "{log}");
        }
        other => panic!(
            "expected a build error, got {:?}",
            other.map(|s| s.id().to_string())
        ),
    }
}

#[tokio::test]
async fn working_dir_gets_the_workspace_and_gives_it_back() {
    if !docker_ready("working_dir_gets_the_workspace_and_gives_it_back").await {
        return;
    }
    let d = dirs("workdir");
    std::fs::write(d.workspace.join("a.txt"), "from the template\n").unwrap();
    std::fs::create_dir_all(d.workspace.join("sub")).unwrap();
    std::fs::write(d.workspace.join("sub/keep.txt"), "kept\n").unwrap();
    let spec = DockerSpec {
        working_dir: Some("/app".into()),
        ..base_spec()
    };
    let sandbox = DockerSandbox::prepare(&spec, &request(&d, vec![], DockerLimits::default()))
        .await
        .unwrap();
    assert_eq!(sandbox.agent_dir(), Path::new("/app"));
    let mut req = sh(&d, "cat a.txt && rm a.txt && echo new > b.txt && pwd");
    req.cwd = sandbox.agent_dir().to_path_buf();
    let (out, err, code) = run(&sandbox, req).await;
    assert_eq!(
        (out.as_str(), code),
        ("from the template\n/app\n", 0),
        "{err}"
    );
    sandbox.copy_out().await.unwrap();
    assert!(!d.workspace.join("a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(d.workspace.join("b.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.workspace.join("sub/keep.txt")).unwrap(),
        "kept\n"
    );
    sandbox.remove().await.unwrap();
}

#[tokio::test]
async fn the_real_claude_cli_runs_in_the_container_against_the_scripted_model() {
    use coder_eval_scripted_model::{Script, ScriptedModel, ServerConfig};
    use tokio::io::AsyncBufReadExt;
    let test = "the_real_claude_cli_runs_in_the_container_against_the_scripted_model";
    if !docker_ready(test).await {
        return;
    }
    let claude = root().join("harnesses/node_modules/.bin/claude");
    if !claude.exists() {
        eprintln!(
            "skipped {test}: no {} (scripts/setup.sh installs it)",
            claude.display()
        );
        return;
    }
    let d = dirs("claude");
    let script = Script::from_str(
        "name: docker\nreplies:\n  - text: Hello from inside the container.\n",
        "docker test",
        true,
    )
    .unwrap();
    let model = ScriptedModel::start(ServerConfig::new(script, d.workspace.display().to_string()))
        .await
        .unwrap();
    // In the host's network namespace, and sealed with only the model's port forwarded in.
    for network in [DockerNetwork::Bridge, DockerNetwork::None] {
        let spec = DockerSpec {
            network: Some(network),
            ..base_spec()
        };
        let sandbox =
            DockerSandbox::prepare(&spec, &request(&d, cli_mounts(), DockerLimits::default()))
                .await
                .unwrap();
        sandbox.forward_host_port(model.port()).unwrap();
        // The environment the run loop gives Claude Code (its launch plan and the host's own).
        let url = model.base_url();
        let mut env = env(&d);
        for (k, v) in [
            ("LANG", "C.UTF-8"),
            ("TERM", "dumb"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("ANTHROPIC_BASE_URL", url.as_str()),
            ("ANTHROPIC_API_KEY", "sk-test"),
            ("IS_SANDBOX", "1"),
            ("HTTPS_PROXY", url.as_str()),
            ("HTTP_PROXY", url.as_str()),
            ("NO_PROXY", "127.0.0.1,localhost"),
        ] {
            env.push((k.into(), v.into()));
        }
        let argv = [
            claude.display().to_string().as_str(),
            "-p",
            "Say hello.",
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
        ]
        .map(String::from)
        .to_vec();
        let t = Instant::now();
        let mut exec = sandbox
            .exec(ExecRequest {
                argv,
                env,
                cwd: d.workspace.clone(),
                stdin: None,
            })
            .await
            .unwrap();
        // Line by line, as the turn loop reads a child's stdout.
        let mut lines = tokio::io::BufReader::new(exec.stdout.take().unwrap()).lines();
        let mut seen = Vec::new();
        let read = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                seen.push(line);
            }
        };
        if tokio::time::timeout(Duration::from_secs(120), read)
            .await
            .is_err()
        {
            exec.stop(Duration::from_secs(1)).await.unwrap();
            panic!("claude did not finish in 120 s; stdout so far: {seen:?}");
        }
        let code = exec.wait().await.unwrap();
        let (_, err, _) = exec.output().await.unwrap();
        eprintln!(
            "timing: claude -p in the container (network {network:?}), {} ms, {} stdout lines",
            t.elapsed().as_millis(),
            seen.len()
        );
        assert_eq!(code, 0, "stderr: {}", String::from_utf8_lossy(&err));
        let result = seen
            .iter()
            .find(|l| l.contains("\"type\":\"result\""))
            .unwrap_or_else(|| panic!("no result line: {seen:?}"));
        assert!(
            result.contains("Hello from inside the container."),
            "{result}"
        );
        assert_eq!(
            exec.stop(Duration::from_secs(1)).await.unwrap(),
            0,
            "nothing left behind"
        );
        sandbox.remove().await.unwrap();
    }
}
