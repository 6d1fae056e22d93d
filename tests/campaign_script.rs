//! `scripts/campaign.sh` carries a campaign across sessions through the
//! committed dataset: it starts from it when its database is missing and
//! writes it back when it stops. Run on a copy of the script with a
//! stand-in for the binary, so no kernel is measured.

use std::path::Path;
use std::process::Command;

fn setup(dir: &Path, fake: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::copy(
        root.join("scripts/campaign.sh"),
        dir.join("scripts/campaign.sh"),
    )
    .unwrap();
    std::fs::write(dir.join("models/dataset.sqlite"), "committed").unwrap();
    let bin = dir.join("fake-polytune");
    std::fs::write(&bin, format!("#!/bin/sh\n{fake}\n")).unwrap();
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn run(dir: &Path) -> std::process::Output {
    Command::new("bash")
        .arg(dir.join("scripts/campaign.sh"))
        .env("POLYTUNE", dir.join("fake-polytune"))
        .output()
        .unwrap()
}

#[test]
fn starts_from_the_committed_dataset_and_writes_it_back() {
    let dir = tempfile::tempdir().unwrap();
    // `collect` appends a line to the database; `export --db D --compact O`
    // copies it.
    setup(
        dir.path(),
        r#"case "$1" in
collect) echo "measured $*" >> "$4" ;;
export) cp "$3" "$5" ;;
esac"#,
    );
    let out = run(dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = std::fs::read_to_string(dir.path().join("campaign/runs.sqlite")).unwrap();
    assert!(db.starts_with("committed"), "{db}");
    assert_eq!(db.matches("measured collect").count(), 3, "three passes");
    let back = std::fs::read_to_string(dir.path().join("models/dataset.sqlite")).unwrap();
    assert_eq!(
        back, db,
        "the dataset is written back when the campaign stops"
    );
}

#[test]
fn a_failed_checkpoint_leaves_the_dataset_alone() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), "exit 1");
    let out = run(dir.path());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("resuming from models/dataset.sqlite"),
        "{stderr}"
    );
    assert!(stderr.contains("checkpoint failed"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("models/dataset.sqlite")).unwrap(),
        "committed"
    );
    assert!(!dir.path().join("models/dataset.sqlite.tmp").exists());
}

#[test]
fn the_extended_campaign_carries_over_through_its_own_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    setup(
        dir.path(),
        r#"case "$1" in
collect) echo "measured $*" >> "$4" ;;
export) cp "$3" "$5" ;;
esac"#,
    );
    let checkpoint = dir.path().join("models/campaign-extended.sqlite");
    std::fs::write(&checkpoint, "earlier session\n").unwrap();
    let out = Command::new("bash")
        .arg(dir.path().join("scripts/campaign.sh"))
        .env("POLYTUNE", dir.path().join("fake-polytune"))
        .env("EXTENDED", "30")
        .env("JOBS", "2")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = std::fs::read_to_string(dir.path().join("campaign/extended.sqlite")).unwrap();
    assert!(db.starts_with("earlier session"), "{db}");
    let passes: Vec<&str> = db.lines().filter(|l| l.starts_with("measured")).collect();
    assert_eq!(passes.len(), 1, "one pass: {db}");
    for arg in [
        "--compiler gcc,clang",
        "--space extended --sample 30 --seed 1",
        "--jobs 2",
        "--size medium",
    ] {
        assert!(passes[0].contains(arg), "{arg}: {}", passes[0]);
    }
    assert_eq!(std::fs::read_to_string(&checkpoint).unwrap(), db);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("models/dataset.sqlite")).unwrap(),
        "committed",
        "the shipped dataset is not the extended campaign's checkpoint"
    );
}
