//! The apps a node serves and their classes: read at every event, written
//! when an app is added, a class reloaded (`serve --watch`) or an app stopped
//! (its tombstone). The table owns its lock and hands out no guard.

use crate::address::ActorKey;
use crate::bindings::ActorPre;
use crate::error::RuntimeError;
use crate::imports::HostState;
use crate::manifest::Access;
use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A class of a loaded app.
pub(crate) struct Class {
    pub(crate) pre: ActorPre<HostState>,
    pub(crate) access: Access,
}

/// A loaded app.
pub(crate) struct App {
    pub(crate) classes: HashMap<String, Arc<Class>>,
}

/// Every app this node serves, by name.
#[derive(Default)]
pub(crate) struct AppTable {
    apps: RwLock<HashMap<String, Arc<App>>>,
}

impl AppTable {
    fn read(&self) -> RwLockReadGuard<'_, HashMap<String, Arc<App>>> {
        self.apps.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<String, Arc<App>>> {
        self.apps.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Serves `app` with `classes` from now on (in place of what it had).
    pub(crate) fn insert(&self, app: &str, classes: HashMap<String, Arc<Class>>) {
        self.write().insert(app.to_owned(), Arc::new(App { classes }));
    }

    /// Replaces one class of a loaded app.
    ///
    /// # Errors
    /// No such app, or no such class in it.
    pub(crate) fn replace_class(&self, app: &str, name: &str, class: Class) -> Result<(), RuntimeError> {
        let mut apps = self.write();
        let loaded = apps.get(app).ok_or_else(|| RuntimeError::NoSuchApp(app.to_owned()))?;
        if !loaded.classes.contains_key(name) {
            return Err(no_such_class(app, name, loaded));
        }
        let mut classes = loaded.classes.clone();
        classes.insert(name.to_owned(), Arc::new(class));
        apps.insert(app.to_owned(), Arc::new(App { classes }));
        Ok(())
    }

    /// This node no longer serves `app`.
    pub(crate) fn remove(&self, app: &str) {
        self.write().remove(app);
    }

    /// The names of the apps served.
    pub(crate) fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// Every app served, with its name.
    pub(crate) fn all(&self) -> Vec<(String, Arc<App>)> {
        self.read().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// The class of `key`.
    ///
    /// # Errors
    /// No such app, or no such class in it (naming the classes it has).
    pub(crate) fn class(&self, key: &ActorKey) -> Result<Arc<Class>, RuntimeError> {
        let apps = self.read();
        let app = apps
            .get(&key.app)
            .ok_or_else(|| RuntimeError::NoSuchApp(key.app.clone()))?;
        app.classes
            .get(&key.class)
            .cloned()
            .ok_or_else(|| no_such_class(&key.app, &key.class, app))
    }
}

fn no_such_class(app: &str, class: &str, loaded: &App) -> RuntimeError {
    let mut known: Vec<&str> = loaded.classes.keys().map(String::as_str).collect();
    known.sort_unstable();
    RuntimeError::NoSuchClass {
        app: app.to_owned(),
        class: class.to_owned(),
        known: known.join(", "),
    }
}
