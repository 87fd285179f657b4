//! `coder-eval plan --emit k8s-job`: a Kubernetes Indexed Job (batch/v1) whose pod `K`
//! runs shard `K` of the plan (`run --plan /plan/plan.json --shard-from-env`) into
//! `/results/shard-K`, retried per index on an infrastructure failure and failed at once
//! on a configuration error (`podFailurePolicy` over coder-eval's exit codes). Built as a
//! value and written by serde_yaml_ng, not from a text template.

use coder_eval::exit_codes;
use coder_eval::suite::plan::Plan;
use coder_eval::suite::shard::{COUNT_ENV, INDEX_ENV};
use serde_json::json;

/// The manifest's settings (used with `--emit k8s-job`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Kubernetes Job (--emit k8s-job)")]
pub struct K8sArgs {
    /// The container image: coder-eval on PATH, the agent CLIs, and the plan's task files
    /// at the paths the plan names (relative to the image's working directory).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// How many shards (the Job's `completions`), 1 to 100000 (Kubernetes' limit for an
    /// Indexed Job with `backoffLimitPerIndex`). Default: the plan's units, at most 10.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_SHARDS))]
    pub shards: Option<u32>,
    /// How many pods run at once (default: every shard), 1 to 100000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_SHARDS))]
    pub parallelism: Option<u32>,
    /// Retries of one shard after an infrastructure failure (exit 3, or a signal).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub backoff_limit_per_index: u32,
    /// The PersistentVolumeClaim mounted at /results (each shard writes
    /// /results/shard-K).
    #[arg(long, value_name = "NAME", default_value = "coder-eval-results")]
    pub results_claim: String,
    /// The Job's name (default: coder-eval- and the plan id's first 12 digits): a DNS-1123
    /// label (lowercase letters, digits and '-', starting and ending with a letter or
    /// digit), at most 58 characters. The plan is read from the ConfigMap `<name>-plan`
    /// (key plan.json), which holds at most 1 MiB: a larger plan is refused.
    #[arg(long, value_name = "NAME", value_parser = parse_job_name)]
    pub job_name: Option<String>,
    /// The Kubernetes Secret the pods read each `--pass-env` and `--judge-env` variable
    /// from (`secretKeyRef`, key = the variable's name; default `<job-name>-env`). Create
    /// it before the Job: `kubectl create secret generic NAME --from-literal=VAR=...`.
    #[arg(long, value_name = "NAME")]
    pub secret: Option<String>,
}

/// The Job's name: `--job-name`, else `coder-eval-` and the plan id's first 12 digits.
pub fn job_name(plan: &Plan, args: &K8sArgs) -> String {
    args.job_name
        .clone()
        .unwrap_or_else(|| format!("coder-eval-{}", &plan.plan_id[..12.min(plan.plan_id.len())]))
}

/// The Secret the variables are read from: `--secret`, else `<job-name>-env`.
pub fn secret_name(plan: &Plan, args: &K8sArgs) -> String {
    args.secret
        .clone()
        .unwrap_or_else(|| format!("{}-env", job_name(plan, args)))
}

/// What to create before applying the Job, one `note:` line each (for stderr): the
/// ConfigMap holding `plan_file` under the key `plan.json` the pods read, whatever the
/// file's own name, and the Secret holding `secret_vars` (empty: no Secret needed).
pub fn notes(
    plan: &Plan,
    args: &K8sArgs,
    plan_file: &std::path::Path,
    secret_vars: &[String],
) -> Vec<String> {
    let name = job_name(plan, args);
    let mut notes = vec![format!(
        "note: the Job reads /plan/plan.json from the ConfigMap {name}-plan (key plan.json): \
         kubectl create configmap {name}-plan --from-file=plan.json={}",
        plan_file.display()
    )];
    if !secret_vars.is_empty() {
        let secret = secret_name(plan, args);
        let literals: Vec<String> = secret_vars
            .iter()
            .map(|v| format!("--from-literal={v}=\"${v}\""))
            .collect();
        notes.push(format!(
            "note: the pods read {} from the Secret {secret} (one key per variable): \
             kubectl create secret generic {secret} {}",
            secret_vars.join(", "),
            literals.join(" ")
        ));
    }
    notes
}

/// The longest Job name: a Job's name goes into its pods' `job-name` label (63
/// characters at most) and the ConfigMap `<name>-plan` is read beside it: 63 − 5.
pub const MAX_JOB_NAME: usize = 58;

/// The most bytes a ConfigMap holds (Kubernetes refuses more than 1 MiB of data).
pub const CONFIGMAP_LIMIT: usize = 1024 * 1024;

/// `--job-name`: a DNS-1123 label of at most [`MAX_JOB_NAME`] characters.
fn parse_job_name(name: &str) -> Result<String, String> {
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let ends = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if name.is_empty() || name.len() > MAX_JOB_NAME {
        return Err(format!(
            "{name:?}: a Job name has 1 to {MAX_JOB_NAME} characters (its pods' job-name label \
             holds 63, and the ConfigMap <name>-plan is read beside it)"
        ));
    }
    if !ok_chars || !ends(name.as_bytes().first()) || !ends(name.as_bytes().last()) {
        return Err(format!(
            "{name:?}: not a DNS-1123 label (lowercase letters, digits and '-', starting and \
             ending with a letter or digit), as Kubernetes requires of a Job's name"
        ));
    }
    Ok(name.to_string())
}

/// Why a plan of `bytes` bytes cannot go into the Job's ConfigMap, if it cannot.
pub fn too_big_for_configmap(bytes: usize) -> Option<String> {
    let data = bytes + "plan.json".len();
    (data > CONFIGMAP_LIMIT).then(|| {
        format!(
            "the plan is {bytes} bytes: more than the 1 MiB ({CONFIGMAP_LIMIT} bytes) a \
             Kubernetes ConfigMap holds, so the Job could not read it; split the suite into \
             several plans (fewer task files, repeats or variants each) and emit a Job per plan"
        )
    })
}

/// The most `completions` and `parallelism` Kubernetes accepts for an Indexed Job with
/// `backoffLimitPerIndex` (batch/v1 Job validation).
pub const MAX_SHARDS: i64 = 100_000;

/// The container's name (the `podFailurePolicy` rules name it).
const CONTAINER: &str = "coder-eval";

/// The Indexed Job for `plan`, as YAML. Each of `secret_vars` (the run's `--pass-env` and
/// `--judge-env` names) is set in the container from the Secret [`secret_name`], key =
/// the variable's name.
pub fn job(
    plan: &Plan,
    args: &K8sArgs,
    secret_vars: &[String],
) -> Result<String, Box<dyn std::error::Error>> {
    let image = args.image.clone().ok_or("--emit k8s-job needs --image")?;
    let shards = args
        .shards
        .unwrap_or_else(|| (plan.units.len() as u32).clamp(1, 10));
    let name = job_name(plan, args);
    let secret = secret_name(plan, args);
    let mut env = vec![
        json!({"name": INDEX_ENV, "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}),
        json!({"name": COUNT_ENV, "value": shards.to_string()}),
    ];
    env.extend(
        secret_vars
            .iter()
            .map(|v| json!({"name": v, "valueFrom": {"secretKeyRef": {"name": secret, "key": v}}})),
    );
    let labels = json!({
        "app.kubernetes.io/name": "coder-eval",
        "coder-eval/plan": &plan.plan_id[..16.min(plan.plan_id.len())],
    });
    let value = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "completionMode": "Indexed",
            "completions": shards,
            "parallelism": args.parallelism.unwrap_or(shards).min(shards),
            "backoffLimitPerIndex": args.backoff_limit_per_index,
            "podFailurePolicy": {"rules": [
                // A bad plan, task file or invocation fails the same way every time.
                {"action": "FailJob", "onExitCodes": {
                    "containerName": CONTAINER, "operator": "In", "values": [exit_codes::USAGE]}},
                // A node drained or a pod preempted is not the shard's failure.
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                // An infrastructure failure or a signal: retry this index.
                {"action": "Count", "onExitCodes": {
                    "containerName": CONTAINER, "operator": "In",
                    "values": [exit_codes::INFRA, 129, exit_codes::INTERRUPTED, 143]}},
            ]},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": CONTAINER,
                        "image": image,
                        "command": ["coder-eval"],
                        "args": ["run", "--plan", "/plan/plan.json", "--shard-from-env",
                                 "--out", format!("/results/shard-$({INDEX_ENV})")],
                        "env": env,
                        "volumeMounts": [
                            {"name": "results", "mountPath": "/results"},
                            {"name": "plan", "mountPath": "/plan", "readOnly": true},
                        ],
                    }],
                    "volumes": [
                        {"name": "results", "persistentVolumeClaim": {"claimName": args.results_claim}},
                        {"name": "plan", "configMap": {"name": format!("{name}-plan")}},
                    ],
                },
            },
        },
    });
    Ok(serde_yaml_ng::to_string(&value)?)
}
