//! Loading apps into a runtime: manifests, classes, a class replaced by
//! `serve --watch`, and the compiled-component cache.

use super::*;

impl Runtime {
    /// Loads (or replaces) an app from a manifest file, compiling its components.
    ///
    /// # Errors
    /// The manifest is invalid or a component cannot be compiled or linked.
    pub fn load_manifest(&self, path: &Path) -> Result<Manifest, RuntimeError> {
        let manifest = Manifest::load(path)?;
        self.add_app(&manifest.app, &manifest.classes)?;
        self.set_retention(&manifest.app, manifest.retention);
        Ok(manifest)
    }

    /// Sets how long the app's history keeps every acknowledged state
    /// restorable (a manifest's `retention`; seven days unless set). A
    /// cluster node's collections erase what lies before it (ADR 064); a
    /// single node keeps no history.
    pub fn set_retention(&self, app: &str, window: std::time::Duration) {
        self.host.storage().set_retention(app, window);
    }

    /// Loads (or replaces) an app from its classes.
    ///
    /// # Errors
    /// A name is invalid, or a component cannot be read, compiled or linked.
    pub fn add_app(&self, app: &str, classes: &[ClassSpec]) -> Result<(), RuntimeError> {
        crate::address::validate_app_name(app).map_err(RuntimeError::BadArgument)?;
        let mut loaded = HashMap::new();
        for c in classes {
            crate::address::validate_class_name(&c.name).map_err(RuntimeError::BadArgument)?;
            let (pre, _) = self.link_component(&c.component)?;
            loaded.insert(c.name.clone(), Arc::new(Class { pre, access: c.access }));
        }
        self.host.apps().insert(app, loaded);
        Ok(())
    }

    /// Replaces one class of a loaded app with the component `spec` names
    /// (`serve --watch`, after a rebuild). Each actor of the class meets the
    /// new component at its next event; its database, alarm and open
    /// sockets stay. When the new component does not load, the old one stays.
    ///
    /// # Errors
    /// No such app or class, or the component does not load (as [`Runtime::add_app`]).
    pub fn reload_class(&self, app: &str, spec: &ClassSpec) -> Result<CacheOutcome, RuntimeError> {
        let (pre, outcome) = self.link_component(&spec.component)?;
        self.host.apps().replace_class(
            app,
            &spec.name,
            Class {
                pre,
                access: spec.access,
            },
        )?;
        self.host.class_reloaded();
        Ok(outcome)
    }

    /// Compiles (or loads from the compiled-component cache) one component and
    /// links it, without adding it to an app: whether it would load, and
    /// whether the cache had it.
    ///
    /// # Errors
    /// The file cannot be read, is not a component, or does not link against
    /// `wasmkeep:actor@0.2.x` and WASI 0.2.
    pub fn load_component(&self, path: &Path) -> Result<CacheOutcome, RuntimeError> {
        self.link_component(path).map(|(_, outcome)| outcome)
    }

    fn link_component(&self, path: &Path) -> Result<(ActorPre<HostState>, CacheOutcome), RuntimeError> {
        let err = |message: String| RuntimeError::Component {
            path: path.to_owned(),
            message,
        };
        let (component, outcome) = match self.host.cache().load_seen(self.host.engine(), path) {
            Some(component) => (component, CacheOutcome::Hit),
            None => {
                let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
                if !bytes.starts_with(b"\0asm") {
                    return Err(err(format!(
                        "is not a WebAssembly file: build the actor into a wasm32-wasip2 component ({})",
                        crate::manifest::BUILD_HINT
                    )));
                }
                self.host.cache().load_file(self.host.engine(), path, &bytes).map_err(|e| {
                    let reason = format!("{e:#}");
                    if let Some(pool) = self.host.instance_pool()
                        && crate::instance_pool::exceeds_slot(&reason)
                    {
                        return err(pool.refusal(&reason, self.host.config().memory_limit_bytes));
                    }
                    err(format!(
                        "not a valid WebAssembly component ({e:#}); build the actor into a wasm32-wasip2 component ({})",
                        crate::manifest::BUILD_HINT
                    ))
                })?
            }
        };
        let pre = self.host.linker().instantiate_pre(&component).map_err(|e| {
            err(format!(
                "does not link against wasmkeep:actor@0.2.x and WASI 0.2: {e:#}"
            ))
        })?;
        let pre = ActorPre::new(pre).map_err(|e| err(format!("does not export wasmkeep:actor/events@0.2.x: {e:#}")))?;
        Ok((pre, outcome))
    }
}
