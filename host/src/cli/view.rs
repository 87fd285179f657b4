//! `coder-eval view`.

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use coder_eval::exit_codes;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use tower::ServiceExt;

/// Serves a run folder on loopback, `report.html` at `/` and the files it links
/// (`task.json`, recordings, workspaces, with a listing for a folder) beside it, prints
/// `URL http://127.0.0.1:<port>/`, opens it in the desktop's browser when there is one
/// (`xdg-open`, `open`), and serves until Ctrl-C. Only what lies inside the run folder is
/// served (a symlink out of it is not followed); nothing is written. `report.html` is a
/// self-contained file too: opening it directly works without this command. Exit code: 0
/// after Ctrl-C, 2 when the folder has no `report.html` or the port cannot be bound.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval view runs/nightly
  coder-eval view runs/nightly --port 8080 --no-open")]
pub struct ViewArgs {
    /// The run folder (holding report.html).
    run_dir: PathBuf,
    /// Port on 127.0.0.1 (0 = any free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Print the address only; do not start a browser.
    #[arg(long)]
    no_open: bool,
}

pub fn run(args: ViewArgs) -> Result<i32, Box<dyn std::error::Error>> {
    if !args.run_dir.is_dir() {
        eprintln!("error: {}: no such folder", args.run_dir.display());
        return Ok(exit_codes::USAGE);
    }
    if !args.run_dir.join("report.html").is_file() {
        eprintln!(
            "error: {}: no report.html here (a run folder holds one; `coder-eval run --out` \
             writes it)",
            args.run_dir.display()
        );
        return Ok(exit_codes::USAGE);
    }
    let root = Arc::new(args.run_dir.canonicalize()?);
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = match tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await {
            Ok(l) => l,
            Err(err) => {
                eprintln!("error: cannot listen on 127.0.0.1:{}: {err}", args.port);
                return Ok(exit_codes::USAGE);
            }
        };
        let port = listener.local_addr()?.port();
        let url = format!("http://127.0.0.1:{port}/");
        let app = axum::Router::new()
            .fallback(axum::routing::get(serve))
            .with_state(Served { root, port });
        super::print_stdout(&format!("URL {url}\n"));
        eprintln!(
            "serving {} on {url} (Ctrl-C to stop)",
            args.run_dir.display()
        );
        if !args.no_open {
            open_browser(&url);
        }
        let server = axum::serve(listener, app).with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        });
        // Ctrl-C lets open requests finish, for at most `VIEW_SHUTDOWN_GRACE` (a client
        // that never ends its request does not hold the viewer).
        tokio::select! {
            served = server => served?,
            () = async {
                let _ = tokio::signal::ctrl_c().await;
                tokio::time::sleep(coder_eval::limits::VIEW_SHUTDOWN_GRACE).await;
            } => {}
        }
        Ok::<_, Box<dyn std::error::Error>>(exit_codes::OK)
    })
}

/// One GET: `/` is the report; a file inside the run folder is itself (text files as
/// text, so a browser shows a recording instead of downloading it); a folder is a
/// listing; anything else, or anything whose real path leaves the folder, is a 404.
/// What the viewer serves: the run folder (its real path) on a port.
#[derive(Clone)]
struct Served {
    root: Arc<PathBuf>,
    port: u16,
}

async fn serve(State(Served { root, port }): State<Served>, request: Request) -> Response {
    let not_found = || (StatusCode::NOT_FOUND, "not found").into_response();
    // Only requests addressed to this loopback server (a page elsewhere cannot reach it
    // through a name that resolves to 127.0.0.1: DNS rebinding).
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if host != format!("127.0.0.1:{port}") && host != format!("localhost:{port}") {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            "this viewer answers 127.0.0.1 only",
        )
            .into_response();
    }
    let decoded = percent_encoding::percent_decode_str(request.uri().path()).decode_utf8_lossy();
    let relative = Path::new(decoded.trim_start_matches('/'));
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return not_found();
    }
    let wanted = if relative.as_os_str().is_empty() {
        root.join("report.html")
    } else {
        root.join(relative)
    };
    // The real path, symlinks followed: it must still be inside the run folder.
    let Ok(real) = wanted.canonicalize() else {
        return not_found();
    };
    if !real.starts_with(root.as_path()) {
        return not_found();
    }
    if real.is_dir() {
        return listing(&real, relative).into_response();
    }
    let text = matches!(
        real.extension().and_then(|e| e.to_str()),
        Some(
            "jsonl"
                | "log"
                | "txt"
                | "md"
                | "py"
                | "yaml"
                | "yml"
                | "toml"
                | "rs"
                | "sh"
                | "js"
                | "ts"
                | "csv"
        )
    );
    let mut response = match tower_http::services::ServeFile::new(&real)
        .oneshot(request)
        .await
    {
        Ok(r) => r.into_response(),
        Err(never) => match never {},
    };
    if text {
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
    }
    response
}

/// A folder's entries as links (names escaped and URL-encoded).
fn listing(dir: &Path, relative: &Path) -> Html<String> {
    let mut entries: Vec<(String, bool)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| {
                    let is_dir = e.path().is_dir();
                    (e.file_name().to_string_lossy().into_owned(), is_dir)
                })
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    let encode = |name: &str| {
        percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    let title = format!("/{}", relative.display());
    Html(
        maud::html! {
            (maud::DOCTYPE)
            html lang="en" {
                head { meta charset="utf-8"; link rel="icon" href="data:,"; title { (title) } }
                body style="font: 14px system-ui, sans-serif; margin: 2em" {
                    h1 { (title) }
                    ul {
                        li { a href="../" { "../" } }
                        @for (name, is_dir) in &entries {
                            li {
                                a href={ (encode(name)) @if *is_dir { "/" } } {
                                    (name) @if *is_dir { "/" }
                                }
                            }
                        }
                    }
                }
            }
        }
        .into_string(),
    )
}

/// Starts the desktop's browser on `url`, when one is there; says so when not.
fn open_browser(url: &str) {
    for opener in ["xdg-open", "open"] {
        if std::process::Command::new(opener)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .is_ok()
        {
            return;
        }
    }
    eprintln!("(no browser opener found: open {url} yourself)");
}
