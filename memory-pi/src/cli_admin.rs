//! `pimem on`, `pimem off` and `pimem doctor [--json]`: pi-auto-memory's switch and the
//! read-only diagnostics (PA-11..PA-16, PA-26, PA-52). They run before a project is opened,
//! so the doctor can report a project that cannot be opened, and the switch works anywhere.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use memory_core::messages as msg;
use memory_core::{Switch, default_agent_dir, load_config, ui_language};
use memory_pi::doctor;
use memory_pi::serve::PROTOCOL;

use crate::cli::{GlobalOptions, print_json, print_text};

fn agent_dir(opts: &GlobalOptions) -> Result<PathBuf> {
    opts.agent_dir
        .clone()
        .or_else(default_agent_dir)
        .ok_or_else(|| {
            anyhow!(msg::doctor::no_agent_dir(ui_language(
                &memory_core::Config::default()
            )))
        })
}

fn cwd(opts: &GlobalOptions) -> Result<PathBuf> {
    let here = std::env::current_dir();
    Ok(match &opts.cwd {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => here?.join(p),
        None => here?,
    })
}

/// `pimem on` / `pimem off`.
pub(crate) fn cmd_switch(opts: &GlobalOptions, enabled: bool) -> Result<()> {
    let dir = agent_dir(opts)?;
    let cwd = cwd(opts)?;
    let config = load_config(&dir, &cwd, false).config;
    let l = ui_language(&config);
    let switch = Switch::new(&dir, Duration::from_millis(config.lock.timeout_ms));
    let out = switch.set(enabled).map_err(|e| anyhow!("{e}"))?;
    let text = if enabled {
        msg::switched_on(l, &switch.path(), out.written)
    } else {
        msg::switched_off(l, &switch.path(), out.written)
    };
    if opts.json {
        return print_json(&serde_json::json!({
            "enabled": enabled, "wasOn": out.was_on, "written": out.written,
            "path": switch.path(),
        }));
    }
    print_text(&text)
}

/// `pimem doctor [--json]`: exit status 1 when any check fails.
pub(crate) fn cmd_doctor(opts: &GlobalOptions) -> Result<()> {
    let cwd = cwd(opts)?;
    let agent_dir = opts.agent_dir.clone().or_else(default_agent_dir);
    let config = agent_dir
        .as_deref()
        .map(|d| load_config(d, &cwd, opts.trust_project).config)
        .unwrap_or_default();
    let l = ui_language(&config);
    let report = doctor::run(&doctor::Input {
        cwd,
        agent_dir,
        trusted: opts.trust_project,
        memory_dir: opts.memory_dir.clone(),
        models: doctor::Models::Unchecked(msg::doctor::models_cli(l)),
        protocol: doctor::Protocol::Unchecked(msg::doctor::protocol_cli(l)),
        binary: (PROTOCOL, env!("CARGO_PKG_VERSION").to_owned()),
        platform: memory_keys::Platform::current(),
    });
    if opts.json {
        print_json(&report.json())?;
    } else {
        print_text(&report.text())?;
    }
    if report.failed() {
        bail!("doctor: at least one check failed (see above)");
    }
    Ok(())
}
