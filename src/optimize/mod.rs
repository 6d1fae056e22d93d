//! One configuration applied to a whole file: every SCoP is transformed
//! and spliced back; a SCoP the engine cannot handle is left exactly as it
//! was, with the reason.

pub mod learned;

use crate::codegen;
use crate::frontend::SourceFile;
use crate::isl::Ctx;
use crate::model::{EngineError, Model};
use crate::scop::Scop;
use crate::space::Config;
use crate::transform;

/// The transformed file and what could not be done.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub text: String,
    /// One line per SCoP left untouched, with the reason.
    pub skipped: Vec<String>,
}

/// The new body of one SCoP under `config`.
pub fn transform_scop(
    src: &SourceFile,
    scop: &Scop,
    config: &Config,
    context: Option<&str>,
) -> Result<String, EngineError> {
    let ctx = Ctx::new();
    let model = Model::new(&ctx, scop, context)?;
    let schedule = transform::schedule(&model, scop.index, config)?;
    let lowered = codegen::lower(&model, &schedule)?;
    Ok(codegen::emit(scop, &lowered, config, &src.indent_of(scop)))
}

/// Applies `config` to every SCoP of the file.
pub fn optimize(
    src: &SourceFile,
    config: &Config,
    context: Option<&str>,
) -> Result<Outcome, EngineError> {
    let mut bodies = Vec::new();
    let mut skipped = Vec::new();
    for s in &src.scops {
        match transform_scop(src, s, config, context) {
            Ok(body) => bodies.push(body),
            Err(e @ EngineError::Context { .. }) => return Err(e),
            Err(EngineError::Assumption { span, reason, .. }) => {
                let (line, col) = src.line_col(span.start);
                skipped.push(format!(
                    "{}:{line}:{col}: SCoP {} left unchanged: {reason}",
                    src.path.display(),
                    s.index
                ));
                bodies.push(s.original.clone());
            }
            Err(e) => {
                let (line, _) = src.line_col(s.region.open.start);
                skipped.push(format!(
                    "{}:{line}: SCoP {} left unchanged: {e}",
                    src.path.display(),
                    s.index
                ));
                bodies.push(src.text[s.region.body.start..s.region.body.end].to_string());
            }
        }
    }
    Ok(Outcome {
        text: src.splice(&bodies),
        skipped,
    })
}
