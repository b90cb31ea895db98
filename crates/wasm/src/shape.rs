//! How many core instances, linear memories and tables a component creates when it is
//! instantiated, read from its bytes alone (wasmparser) **before** it is compiled.
//!
//! Why: wasmtime checks a component against the instance pool only after compiling it, and
//! throws the compile away when the pool can never hold it (a 19 MB componentize-py component
//! costs ~5 s per attempt). Counting here lets a load refuse such a component at once, naming
//! the pool setting to raise, and lets a run refuse a component whose instance count is above
//! the rule's `instances` limit without instantiating it.
//!
//! The count mirrors wasmtime's (`validate_component` of its pooling allocator, run on the
//! flattened component): every core module instantiation counts one instance plus the memories
//! and tables that module *defines* (imported ones are another instance's); nested components
//! count once per instantiation; a module whose bytes are not known statically (imported, or
//! taken from an instance's exports) counts one instance and nothing else, as in wasmtime.

use serde::{Deserialize, Serialize};
use wasmparser::{
    ComponentAlias, ComponentExternalKind, ComponentInstance, ComponentOuterAliasKind,
    ComponentTypeRef, Instance, Parser, Payload,
};

/// What one instantiation of a component creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ComponentShape {
    /// Core module instances (a Rust hook: 1–5; componentize-py: 38).
    pub core_instances: u64,
    /// Linear memories defined by those instances.
    pub memories: u64,
    /// Tables defined by those instances.
    pub tables: u64,
}

impl ComponentShape {
    fn add(&mut self, other: &ComponentShape) {
        self.core_instances = self.core_instances.saturating_add(other.core_instances);
        self.memories = self.memories.saturating_add(other.memories);
        self.tables = self.tables.saturating_add(other.tables);
    }
}

/// One core module of a component's module index space: what instantiating it defines, when
/// its bytes are known.
#[derive(Debug, Clone, Copy, Default)]
struct ModuleCost {
    memories: u64,
    tables: u64,
}

/// The index spaces of one component being read, and what its instantiations add up to.
#[derive(Debug, Default)]
struct ComponentScope {
    /// Core module index space; `None` for a module not known statically.
    modules: Vec<Option<ModuleCost>>,
    /// Component index space: what one instantiation of each costs.
    components: Vec<ComponentShape>,
    /// What this component's own instantiations cost so far.
    shape: ComponentShape,
}

enum Scope {
    Module(ModuleCost),
    Component(ComponentScope),
}

/// What is read from a component's bytes without compiling it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reading {
    pub(crate) shape: ComponentShape,
    /// The names of its top-level exports (which tell its world).
    pub(crate) exports: Vec<String>,
}

/// Counts what one instantiation of `bytes` (a component) creates. `Err` when the bytes do not
/// parse; full validation is the compiler's.
pub(crate) fn shape(bytes: &[u8]) -> Result<ComponentShape, String> {
    read(bytes).map(|r| r.shape)
}

/// [`shape`], and the component's export names.
pub(crate) fn read(bytes: &[u8]) -> Result<Reading, String> {
    let mut exports = Vec::new();
    let mut parser = Parser::new(0);
    let mut parsers: Vec<Parser> = Vec::new();
    let mut scopes: Vec<Scope> = Vec::new();
    let mut data = bytes;
    loop {
        let (payload, consumed) = match parser.parse(data, true).map_err(|e| e.to_string())? {
            wasmparser::Chunk::Parsed { payload, consumed } => (payload, consumed),
            wasmparser::Chunk::NeedMoreData(_) => return Err("truncated component".into()),
        };
        data = &data[consumed..];
        match payload {
            Payload::Version { encoding, .. } => scopes.push(match encoding {
                wasmparser::Encoding::Module => Scope::Module(ModuleCost::default()),
                wasmparser::Encoding::Component => Scope::Component(ComponentScope::default()),
            }),
            Payload::ModuleSection { parser: nested, .. }
            | Payload::ComponentSection { parser: nested, .. } => {
                parsers.push(std::mem::replace(&mut parser, nested));
            }
            Payload::CodeSectionStart { size, .. } => {
                // Function bodies say nothing about instances: skip them unread.
                parser.skip_section();
                let size = usize::try_from(size).map_err(|e| e.to_string())?;
                data = data.get(size..).ok_or("truncated code section")?;
            }
            Payload::MemorySection(s) => {
                if let Some(Scope::Module(m)) = scopes.last_mut() {
                    m.memories += u64::from(s.count());
                }
            }
            Payload::TableSection(s) => {
                if let Some(Scope::Module(m)) = scopes.last_mut() {
                    m.tables += u64::from(s.count());
                }
            }
            Payload::End(_) => {
                let done = scopes.pop().ok_or("unbalanced component nesting")?;
                match (done, scopes.last_mut()) {
                    (Scope::Component(c), None) => {
                        return Ok(Reading {
                            shape: c.shape,
                            exports,
                        });
                    }
                    (Scope::Module(_), None) => {
                        return Err("a core module, not a component".into());
                    }
                    (Scope::Module(m), Some(Scope::Component(outer))) => {
                        outer.modules.push(Some(m));
                    }
                    (Scope::Component(c), Some(Scope::Component(outer))) => {
                        outer.components.push(c.shape);
                    }
                    (_, Some(Scope::Module(_))) => return Err("a module cannot nest".into()),
                }
                parser = parsers.pop().ok_or("unbalanced component nesting")?;
            }
            Payload::ComponentExportSection(s) if scopes.len() == 1 => {
                for export in s.clone() {
                    exports.push(export.map_err(|e| e.to_string())?.name.name.to_owned());
                }
                component_section(&mut scopes, Payload::ComponentExportSection(s))?;
            }
            other => component_section(&mut scopes, other)?,
        }
    }
}

/// The component-model sections that change index spaces or instantiate something.
fn component_section(scopes: &mut [Scope], payload: Payload<'_>) -> Result<(), String> {
    let err = |e: wasmparser::BinaryReaderError| e.to_string();
    let depth = scopes.len();
    if let Payload::ComponentAliasSection(s) = payload {
        for alias in s {
            alias_entry(scopes, depth, alias.map_err(err)?)?;
        }
        return Ok(());
    }
    let Some(Scope::Component(scope)) = scopes.last_mut() else {
        return Ok(());
    };
    match payload {
        Payload::InstanceSection(s) => {
            for instance in s {
                if let Instance::Instantiate { module_index, .. } = instance.map_err(err)? {
                    let module =
                        lookup(&scope.modules, module_index, "module")?.unwrap_or_default();
                    scope.shape.add(&ComponentShape {
                        core_instances: 1,
                        memories: module.memories,
                        tables: module.tables,
                    });
                }
            }
        }
        Payload::ComponentInstanceSection(s) => {
            for instance in s {
                if let ComponentInstance::Instantiate {
                    component_index, ..
                } = instance.map_err(err)?
                {
                    let cost = lookup(&scope.components, component_index, "component")?;
                    scope.shape.add(&cost);
                }
            }
        }
        Payload::ComponentImportSection(s) => {
            for import in s {
                match import.map_err(err)?.ty {
                    ComponentTypeRef::Module(_) => scope.modules.push(None),
                    ComponentTypeRef::Component(_) => {
                        scope.components.push(ComponentShape::default());
                    }
                    _ => {}
                }
            }
        }
        Payload::ComponentExportSection(s) => {
            // An export adds a new index for the same item.
            for export in s {
                let export = export.map_err(err)?;
                match export.kind {
                    ComponentExternalKind::Module => {
                        let m = lookup(&scope.modules, export.index, "module")?;
                        scope.modules.push(m);
                    }
                    ComponentExternalKind::Component => {
                        let c = lookup(&scope.components, export.index, "component")?;
                        scope.components.push(c);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn alias_entry(
    scopes: &mut [Scope],
    depth: usize,
    alias: ComponentAlias<'_>,
) -> Result<(), String> {
    enum Item {
        Module(Option<ModuleCost>),
        Component(ComponentShape),
    }
    let item = match alias {
        ComponentAlias::InstanceExport {
            kind: ComponentExternalKind::Module,
            ..
        } => Item::Module(None),
        ComponentAlias::InstanceExport {
            kind: ComponentExternalKind::Component,
            ..
        } => Item::Component(ComponentShape::default()),
        ComponentAlias::Outer { kind, count, index } => {
            let outer = usize::try_from(count)
                .ok()
                .and_then(|c| depth.checked_sub(c.checked_add(1)?))
                .and_then(|i| scopes.get(i));
            let Some(Scope::Component(outer)) = outer else {
                return Err(format!("outer alias count {count} leaves the component"));
            };
            match kind {
                ComponentOuterAliasKind::CoreModule => {
                    Item::Module(lookup(&outer.modules, index, "module")?)
                }
                ComponentOuterAliasKind::Component => {
                    Item::Component(lookup(&outer.components, index, "component")?)
                }
                ComponentOuterAliasKind::CoreType | ComponentOuterAliasKind::Type => return Ok(()),
            }
        }
        _ => return Ok(()),
    };
    if let Some(Scope::Component(scope)) = scopes.last_mut() {
        match item {
            Item::Module(m) => scope.modules.push(m),
            Item::Component(c) => scope.components.push(c),
        }
    }
    Ok(())
}

fn lookup<T: Copy>(space: &[T], index: u32, what: &str) -> Result<T, String> {
    usize::try_from(index)
        .ok()
        .and_then(|i| space.get(i))
        .copied()
        .ok_or_else(|| format!("{what} index {index} out of bounds"))
}
