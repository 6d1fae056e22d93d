//! Statements: assignments, local blocks, and the array and scalar
//! accesses they make.

use super::expr::Piecewise;
use super::*;

impl Lowerer<'_> {
    pub(super) fn assignment(
        &mut self,
        id: usize,
        span: Span,
        lhs: &Expr,
        op: AssignOp,
        rhs: &Expr,
    ) -> R<()> {
        if self.compound.is_some() {
            return self.inner_assignment(lhs, op, rhs);
        }
        self.current_reads.clear();
        let write = self.target(lhs, op)?;
        self.value(rhs)?;
        self.push_statement(id, span, vec![write], Compound::default());
        Ok(())
    }

    /// The access an assignment writes; a compound assignment also reads it.
    pub(super) fn target(&mut self, lhs: &Expr, op: AssignOp) -> R<Access> {
        let write = match &lhs.kind {
            ExprKind::Access { name, subscripts } => self.access(name, subscripts, lhs.span)?,
            ExprKind::Ident(name) => {
                self.note_use(name, 0, lhs.span)?;
                Access {
                    array: name.clone(),
                    subscripts: vec![],
                    span: lhs.span,
                    inner: None,
                }
            }
            _ => {
                return Err(SpanError::new(
                    lhs.span,
                    "assignment target must be an array element or a scalar variable",
                )
                .help("write to `A[i][j]` or to a local scalar"));
            }
        };
        if op != AssignOp::Assign {
            self.current_reads.push(write.clone());
        }
        Ok(write)
    }

    /// A statement at the current position, with the reads gathered so
    /// far (and a compound statement's may-writes and private iterators).
    fn push_statement(&mut self, id: usize, span: Span, writes: Vec<Access>, c: Compound) {
        let d = self.loops.len();
        let mut schedule = self.prefix.clone();
        schedule.push(ScheduleDim::Position(self.counters[d]));
        self.counters[d] += 1;
        self.statements.push(Statement {
            id,
            iterators: self.loops.iter().map(|l| l.iterator.clone()).collect(),
            domain: Formula::and(self.guards.clone()),
            schedule,
            reads: std::mem::take(&mut self.current_reads),
            writes,
            may_writes: c.may_writes,
            private: c.private,
            span,
        });
    }

    /// A block with variables of its own: one statement whose accesses
    /// are those of its parts, its own variables left out (each execution
    /// of the block has fresh ones: nothing flows between executions).
    /// Inside a compound block (see `compound.rs`), a nested block's parts
    /// are the enclosing statement's.
    pub(super) fn local_block(&mut self, id: usize, span: Span, parts: &[LocalPart]) -> R<()> {
        if self.compound.is_some() {
            return self.local_parts(parts);
        }
        self.current_reads.clear();
        self.block_locals.clear();
        self.single_valued = defs::single_valued(parts, &self.all_iterators);
        self.compound = Some(Compound {
            depth: self.loops.len(),
            guards: self.guards.len(),
            iterators: crate::frontend::scop::ast::loop_iterators(parts),
            ..Compound::default()
        });
        let r = self.local_parts(parts);
        let mut c = self.compound.take().expect("set above");
        self.block_locals.clear();
        self.single_valued.clear();
        self.local_types.clear();
        self.local_defs.clear();
        r?;
        let writes = std::mem::take(&mut c.writes);
        self.push_statement(id, span, writes, c);
        Ok(())
    }

    fn local_parts(&mut self, parts: &[LocalPart]) -> R<()> {
        for p in parts {
            match p {
                LocalPart::Decl {
                    ty,
                    name,
                    init,
                    span,
                } => {
                    // A static variable is one for every execution, a
                    // pointer may reach anything, a volatile one is I/O.
                    let why = if ty.split_whitespace().any(|w| w == "static") {
                        Some("is `static`: one variable shared by every execution of the block")
                    } else if ty.contains('*') {
                        Some("is a pointer: what it points to is not known")
                    } else if ty.split_whitespace().any(|w| w == "volatile") {
                        Some("is `volatile`")
                    } else {
                        None
                    };
                    if let Some(why) = why {
                        return Err(SpanError::new(
                            *span,
                            format!("the block's variable `{name}` {why}"),
                        )
                        .help(
                            "declare it before the loop nest, or move the block outside the SCoP",
                        ));
                    }
                    // Declared without a value for a loop of the block
                    // (`int k; for (k = 0; ...)`): private like the others.
                    let own_iterator = init.is_none()
                        && self
                            .compound
                            .as_ref()
                            .is_some_and(|c| c.iterators.contains(name));
                    if (self.all_iterators.contains(name) && !own_iterator)
                        || self.uses.contains_key(name)
                    {
                        return Err(SpanError::new(
                            *span,
                            format!("`{name}` is declared here and also names another variable of the SCoP"),
                        )
                        .help("give the block's variable a name of its own"));
                    }
                    if let Some(e) = init {
                        let mark = self.current_reads.len();
                        self.value(e)?;
                        self.quantify_reads(mark);
                    }
                    self.block_locals.push(name.clone());
                    self.local_types.insert(name.clone(), ty.clone());
                    if let Some(e) = init {
                        self.define_local(name, e);
                    }
                }
                LocalPart::Assign { lhs, op, rhs, .. } => self.inner_assignment(lhs, *op, rhs)?,
                LocalPart::Stmt(s) => self.stmt(s)?,
            }
        }
        Ok(())
    }

    fn note_use(&mut self, name: &str, rank: usize, span: Span) -> R<()> {
        if self.local_names.contains(name) {
            return Err(SpanError::new(
                span,
                format!("`{name}` is used outside the block that declares it, or as an array"),
            )
            .help(
                "a variable declared in a block is private to it; give other variables other names",
            ));
        }
        match self.uses.get(name) {
            Some(&(r, first)) if r != rank => {
                let what = |r: usize| {
                    if r == 0 {
                        "a scalar".to_string()
                    } else {
                        format!("an array with {r} subscript(s)")
                    }
                };
                Err(SpanError::new(span, format!("`{name}` is used as {} here but as {} earlier", what(rank), what(r)))
                    .help(format!("first use at byte {}; every use of an array needs the same number of subscripts", first.start)))
            }
            Some(_) => Ok(()),
            None => {
                self.uses.insert(name.to_string(), (rank, span));
                Ok(())
            }
        }
    }

    fn access(&mut self, name: &str, subscripts: &[Expr], span: Span) -> R<Access> {
        if self.all_iterators.contains(name) {
            return Err(SpanError::new(
                span,
                format!("loop iterator `{name}` is subscripted like an array"),
            ));
        }
        // The file's index macros read as their expansions (`in[IDX(r,
        // c, nc)]` is `in[(r) * (nc) + (c)]` to the model).
        let expanded: Vec<Expr>;
        let subscripts = if subscripts.iter().any(has_call) {
            expanded = subscripts
                .iter()
                .map(|s| self.expand_calls(s, true))
                .collect::<R<_>>()?;
            &expanded[..]
        } else {
            subscripts
        };
        // A block's scalar of one value reads as that value (`defs.rs`):
        // a linearized subscript may hide in it (`int c = x + y * n;`).
        if let [s] = subscripts
            && let Some(p) = self.linearized(&self.resolve_locals(s))?
        {
            // Split with the array's other accesses at the end.
            self.note_use(name, 1, span)?;
            self.linear.push(super::linear::LinearAccess {
                array: name.to_string(),
                access: span,
                subscript: s.span,
                poly: p,
            });
            return Ok(Access {
                array: name.to_string(),
                subscripts: vec![Affine::default()],
                span,
                inner: None,
            });
        }
        let mut subs = Vec::new();
        for s in subscripts {
            let (p, _) = self.piecewise(s, Place::Subscript)?;
            match p {
                Piecewise::Aff(a) => subs.push(a),
                _ => {
                    return Err(
                        SpanError::new(s.span, "min/max in a subscript is not supported")
                            .help("min and max are accepted in loop bounds and conditions only"),
                    );
                }
            }
        }
        self.note_use(name, subs.len(), span)?;
        Ok(Access {
            array: name.to_string(),
            subscripts: subs,
            span,
            inner: None,
        })
    }

    /// Walks a value expression, recording reads.
    pub(super) fn value(&mut self, e: &Expr) -> R<()> {
        match &e.kind {
            ExprKind::Int { .. } | ExprKind::Float(_) => Ok(()),
            ExprKind::Ident(name) => {
                if self.in_scope(name).is_some() || self.block_locals.contains(name) {
                    return Ok(());
                }
                if self.all_iterators.contains(name) {
                    return Err(SpanError::new(e.span, format!("loop iterator `{name}` is used outside its loop"))
                        .help("its value after the loop is not static control; use the bound expression instead"));
                }
                self.note_use(name, 0, e.span)?;
                self.current_reads.push(Access {
                    array: name.clone(),
                    subscripts: vec![],
                    span: e.span,
                    inner: None,
                });
                Ok(())
            }
            ExprKind::Access { name, subscripts } => {
                let a = self.access(name, subscripts, e.span)?;
                self.current_reads.push(a);
                Ok(())
            }
            ExprKind::Call { name, args } => {
                if !self.pure.contains(name.as_str()) {
                    return Err(SpanError::new(
                        e.span,
                        format!("call to `{name}`, which polytune does not know to be pure"),
                    )
                    .help(format!("if `{name}` has no side effects, declare it pure"))
                    .pure(name));
                }
                args.iter().try_for_each(|a| self.value(a))
            }
            ExprKind::Unary { op, expr } => match op {
                UnOp::Neg | UnOp::Plus | UnOp::Not | UnOp::BitNot => self.value(expr),
                UnOp::Deref | UnOp::AddrOf => Err(SpanError::new(
                    e.span,
                    "pointer dereference or address-of is not supported in a SCoP",
                )
                .help("access data through array subscripts")),
                _ => Err(SpanError::new(
                    e.span,
                    "increment or decrement inside an expression is not supported",
                )
                .help("a SCoP statement may have only one side effect: its assignment")),
            },
            ExprKind::Binary { lhs, rhs, .. } => {
                self.value(lhs)?;
                self.value(rhs)
            }
            ExprKind::Ternary { cond, then, other } => {
                self.value(cond)?;
                self.value(then)?;
                self.value(other)
            }
            ExprKind::Cast { expr, .. } => self.value(expr),
            ExprKind::Unsupported(what) => Err(SpanError::new(
                e.span,
                format!("{what} is not supported in a SCoP"),
            )),
        }
    }
}

/// Whether `e` calls anything.
fn has_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { .. } => true,
        ExprKind::Access { subscripts: v, .. } => v.iter().any(has_call),
        ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => has_call(expr),
        ExprKind::Binary { lhs, rhs, .. } => has_call(lhs) || has_call(rhs),
        ExprKind::Ternary { cond, then, other } => {
            has_call(cond) || has_call(then) || has_call(other)
        }
        _ => false,
    }
}
