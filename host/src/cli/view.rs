//! `coder-eval view`.

use coder_eval::exit_codes;
use std::path::PathBuf;

/// Serves a run folder on loopback, `report.html` at `/` and the files it links
/// (`task.json`, recordings, workspaces) beside it, prints `URL http://127.0.0.1:<port>/`,
/// opens it in the desktop's browser when there is one (`xdg-open`, `open`), and serves
/// until Ctrl-C. Only the run folder is served; nothing is written. `report.html` is a
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
    let report = args.run_dir.join("report.html");
    if !report.is_file() {
        eprintln!(
            "error: {}: no report.html here (a run folder holds one; `coder-eval run --out` \
             writes it)",
            args.run_dir.display()
        );
        return Ok(exit_codes::USAGE);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = match tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await {
            Ok(l) => l,
            Err(err) => {
                eprintln!("error: cannot listen on 127.0.0.1:{}: {err}", args.port);
                return Ok(exit_codes::USAGE);
            }
        };
        let url = format!("http://{}/", listener.local_addr()?);
        // A missing file is a 404; a path out of the folder (`..`) too.
        let service = tower_http::services::ServeDir::new(&args.run_dir)
            .append_index_html_on_directories(false);
        let app = axum::Router::new()
            .route_service("/", tower_http::services::ServeFile::new(&report))
            .fallback_service(service);
        super::print_stdout(&format!("URL {url}\n"));
        eprintln!(
            "serving {} on {url} (Ctrl-C to stop)",
            args.run_dir.display()
        );
        if !args.no_open {
            open_browser(&url);
        }
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok::<_, Box<dyn std::error::Error>>(exit_codes::OK)
    })
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
