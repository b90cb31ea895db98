//! QuickJS in a component of hookbox's `hook` world: the runtime half of the QuickJS toolchain
//! for JavaScript hooks.
//!
//! The author's hook is an ES module that imports `config` and `log` from
//! `hookbox:hook/host@0.1.0` and exports `handler` with a `handle(event)` method — the same
//! source componentize-js builds (records with camelCase fields, `option<T>` as `undefined`,
//! a returned object is `ok(response)`, a thrown value is `err(message)`).
//!
//! The interpreter's state — the runtime, a context with every ES2023 intrinsic, the host module
//! and the author's module compiled and evaluated — is made once: at build time when the
//! component is pre-initialised (`wizer-initialize`, called by the build tool with the module's
//! source, then snapshotted), or at the first event when it is not. Per event only the call to
//! `handler.handle` runs, in a fresh instance of that snapshot.

#![allow(unsafe_code, reason = "wit-bindgen's canonical-ABI glue")]

use std::cell::{Cell, RefCell};
use std::time::{SystemTime, UNIX_EPOCH};

use rquickjs::function::Rest;
use rquickjs::module::{Declarations, Exports, ModuleDef};
use rquickjs::{
    Array, CatchResultExt as _, CaughtError, Context, Ctx, Function, Module, Object, Persistent,
    Runtime, Value,
};

mod bindings {
    wit_bindgen::generate!({
        world: "hook-init",
        path: "wit",
        generate_all,
    });
}

use bindings::exports::hookbox::hook::handler::Guest as Handler;
use bindings::hookbox::hook::host::{self, Level};
use bindings::hookbox::hook::types::{Event, Permission, PermissionDecision, Response};

/// The module name the author imports the host functions from (componentize-js's name for the
/// `host` import, so the same source builds with either toolchain).
const HOST_MODULE: &str = "hookbox:hook/host@0.1.0";
/// The name the author's module is compiled under (it appears in stack traces).
const HOOK_MODULE: &str = "hook.js";

/// How deep JavaScript may recurse, in bytes of the component's stack (64 KiB, the
/// `-zstack-size` of guest-examples/.cargo/config.toml): three quarters of it, so QuickJS's own
/// frames below the check still fit.
const JS_STACK_BYTES: usize = 48 * 1024;

/// The interpreter, made once per instance (or once at build time, in the snapshot).
struct Interpreter {
    // Field order is drop order: the function before the context before the runtime.
    handle: Persistent<Function<'static>>,
    handler: Persistent<Object<'static>>,
    context: Context,
    _runtime: Runtime,
}

thread_local! {
    static INTERPRETER: RefCell<Option<Interpreter>> = const { RefCell::new(None) };
}

/// The source compiled into this build, when the build embeds one (no pre-initialisation).
const EMBEDDED: Option<&str> = option_env!("HOOKBOX_JS_EMBED_SOURCE");

struct Component;

impl bindings::Guest for Component {
    fn wizer_initialize(source: String) -> Result<(), String> {
        INTERPRETER.with(|slot| {
            let interpreter = Interpreter::new(&source)?;
            *slot.borrow_mut() = Some(interpreter);
            Ok(())
        })
    }
}

impl Handler for Component {
    fn handle(event: Event) -> Result<Response, String> {
        INTERPRETER.with(|slot| {
            let mut slot = slot.borrow_mut();
            if slot.is_none() {
                let source = EMBEDDED.ok_or(
                    "this component was built without a hook: build it with the QuickJS \
                     toolchain's build script",
                )?;
                *slot = Some(Interpreter::new(source)?);
            }
            slot.as_ref()
                .map_or(Err(String::new()), |i| i.handle(event))
        })
    }
}

bindings::export!(Component with_types_in bindings);

impl Interpreter {
    fn new(source: &str) -> Result<Self, String> {
        let runtime = Runtime::new().map_err(|e| format!("QuickJS: {e}"))?;
        // Deep recursion is a JavaScript `RangeError` the hook can catch, before the
        // component's own stack runs out (a trap).
        runtime.set_max_stack_size(JS_STACK_BYTES);
        let context = Context::full(&runtime).map_err(|e| format!("QuickJS: {e}"))?;
        let (handle, handler) = context.with(|ctx| -> Result<_, String> {
            // QuickJS seeds `Math.random` when it makes the context, i.e. at build time: every
            // event would draw the same numbers. Ours is seeded per instance, at its first call.
            let math: Object = ctx.globals().get("Math").map_err(|e| e.to_string())?;
            math.set(
                "random",
                Function::new(ctx.clone(), random).map_err(|e| e.to_string())?,
            )
            .map_err(|e| e.to_string())?;
            Module::declare_def::<HostModule, _>(ctx.clone(), HOST_MODULE)
                .catch(&ctx)
                .map_err(|e| describe(&e))?;
            let module = Module::declare(ctx.clone(), HOOK_MODULE, source)
                .catch(&ctx)
                .map_err(|e| format!("{HOOK_MODULE}: {}", describe(&e)))?;
            let (module, done) = module
                .eval()
                .catch(&ctx)
                .map_err(|e| format!("{HOOK_MODULE}: {}", describe(&e)))?;
            done.finish::<()>()
                .catch(&ctx)
                .map_err(|e| format!("{HOOK_MODULE}: {}", describe(&e)))?;
            let handler: Object = module
                .get("handler")
                .catch(&ctx)
                .map_err(|_| format!("{HOOK_MODULE} does not export `handler` (an object)"))?;
            let handle: Function = handler
                .get("handle")
                .catch(&ctx)
                .map_err(|_| format!("{HOOK_MODULE}: `handler.handle` is not a function"))?;
            Ok((
                Persistent::save(&ctx, handle),
                Persistent::save(&ctx, handler),
            ))
        })?;
        Ok(Self {
            handle,
            handler,
            context,
            _runtime: runtime,
        })
    }

    fn handle(&self, event: Event) -> Result<Response, String> {
        self.context.with(|ctx| {
            let handle = self
                .handle
                .clone()
                .restore(&ctx)
                .map_err(|e| e.to_string())?;
            let handler = self
                .handler
                .clone()
                .restore(&ctx)
                .map_err(|e| e.to_string())?;
            let arg = event_to_js(&ctx, event).map_err(|e| e.to_string())?;
            let answer: Value = handle
                .call((rquickjs::function::This(handler), arg))
                .catch(&ctx)
                .map_err(|e| thrown(&e))?;
            response_from_js(&answer)
        })
    }
}

/// The module `hookbox:hook/host@0.1.0`: `config()` and `log(level, message)`.
struct HostModule;

impl ModuleDef for HostModule {
    fn declare(decl: &Declarations) -> rquickjs::Result<()> {
        decl.declare("config")?;
        decl.declare("log")?;
        Ok(())
    }

    fn evaluate<'js>(ctx: &Ctx<'js>, exports: &Exports<'js>) -> rquickjs::Result<()> {
        exports.export("config", Function::new(ctx.clone(), host::config)?)?;
        exports.export(
            "log",
            Function::new(ctx.clone(), |ctx: Ctx<'_>, args: Rest<Value<'_>>| {
                log(&ctx, &args.0)
            })?,
        )?;
        Ok(())
    }
}

/// `Math.random()`: xorshift64* seeded from the event's wall clock (nanoseconds) at the first call in an instance — not a cryptographic generator, as
/// `Math.random` never is. Called by module top-level code it would be seeded at build time and
/// draw the same numbers in every event: call it inside `handle`.
fn random() -> f64 {
    thread_local! {
        static STATE: Cell<u64> = const { Cell::new(0) };
    }
    STATE.with(|state| {
        let mut x = state.get();
        if x == 0 {
            let wall = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            x = (wall ^ 0x9e37_79b9_7f4a_7c15) | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        let bits = x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        bits as f64 / (1_u64 << 53) as f64
    })
}

fn log(ctx: &Ctx<'_>, args: &[Value<'_>]) -> rquickjs::Result<()> {
    let level = args
        .first()
        .and_then(|v| v.as_string())
        .map(|s| s.to_string());
    let level = match level.transpose()?.as_deref() {
        Some("trace") => Level::Trace,
        Some("debug") => Level::Debug,
        Some("info") => Level::Info,
        Some("warn") => Level::Warn,
        Some("error") => Level::Error,
        other => {
            return Err(rquickjs::Exception::throw_type(
                ctx,
                &format!("log: unknown level {other:?} (trace, debug, info, warn or error)"),
            ));
        }
    };
    let message = match args.get(1) {
        Some(v) => to_text(v),
        None => String::new(),
    };
    host::log(level, &message);
    Ok(())
}

fn event_to_js<'js>(ctx: &Ctx<'js>, e: Event) -> rquickjs::Result<Object<'js>> {
    let o = Object::new(ctx.clone())?;
    o.set("name", e.name)?;
    o.set("sessionId", e.session_id)?;
    o.set("cwd", e.cwd)?;
    o.set("transcriptPath", e.transcript_path)?;
    o.set("toolName", e.tool_name)?;
    o.set("toolInput", e.tool_input)?;
    o.set("toolResponse", e.tool_response)?;
    o.set("prompt", e.prompt)?;
    o.set("stopHookActive", e.stop_hook_active)?;
    o.set("lastAssistantMessage", e.last_assistant_message)?;
    o.set("turnEndReason", e.turn_end_reason)?;
    o.set("trigger", e.trigger)?;
    o.set("source", e.source)?;
    o.set("reason", e.reason)?;
    o.set("payload", e.payload)?;
    Ok(o)
}

/// Reads the WIT `response` record from what `handle` returned; a field of the wrong type is an
/// error naming it (componentize-js traps there).
fn response_from_js(v: &Value<'_>) -> Result<Response, String> {
    if v.is_promise() {
        return Err("handler.handle returned a Promise: a hook answers synchronously".into());
    }
    let o = v
        .as_object()
        .ok_or_else(|| format!("handler.handle returned {}, not a response object", kind(v)))?;
    let contexts: Option<Array> = field(o, "additionalContexts")?;
    let mut additional_contexts = Vec::new();
    if let Some(list) = contexts {
        for item in list.iter::<Value>() {
            let item = item.map_err(|e| e.to_string())?;
            let text = item
                .as_string()
                .ok_or("response.additionalContexts holds a value that is not a string")?;
            additional_contexts.push(text.to_string().map_err(|e| e.to_string())?);
        }
    }
    let permission = match field::<Object>(o, "permission")? {
        None => None,
        Some(p) => {
            let decision: String =
                field(&p, "decision")?.ok_or("response.permission.decision is missing")?;
            let decision = match decision.as_str() {
                "allow" => PermissionDecision::Allow,
                "ask" => PermissionDecision::Ask,
                "defer" => PermissionDecision::Defer,
                "deny" => PermissionDecision::Deny,
                other => {
                    return Err(format!(
                        "response.permission.decision is {other:?}: allow, ask, defer or deny"
                    ));
                }
            };
            Some(Permission {
                decision,
                reason: field(&p, "reason")?,
            })
        }
    };
    Ok(Response {
        additional_contexts,
        block_reason: field(o, "blockReason")?,
        stop_reason: field(o, "stopReason")?,
        permission,
        updated_input: field(o, "updatedInput")?,
        follow_up: field(o, "followUp")?,
        suppress_output: field(o, "suppressOutput")?.unwrap_or(false),
        system_message: field(o, "systemMessage")?,
    })
}

/// An optional field: `undefined` or `null` is `None`, a value of another type is an error.
fn field<'js, T: rquickjs::FromJs<'js>>(o: &Object<'js>, name: &str) -> Result<Option<T>, String> {
    let v: Value = o.get(name).map_err(|e| e.to_string())?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    let what = kind(&v);
    T::from_js(o.ctx(), v)
        .map(Some)
        .map_err(|_| format!("response.{name} has the wrong type ({what})"))
}

fn kind(v: &Value<'_>) -> &'static str {
    v.type_of().as_str()
}

/// What `err(message)` carries for a thrown value: a string as it is, an Error as
/// `Name: message`, anything else as `String(value)`.
fn thrown(e: &CaughtError<'_>) -> String {
    match e {
        CaughtError::Value(v) => to_text(v),
        CaughtError::Exception(e) => to_text(e.as_object().as_value()),
        CaughtError::Error(e) => e.to_string(),
    }
}

/// A build-time error: what was thrown, with the stack when it is an Error (the line in the
/// author's module).
fn describe(e: &CaughtError<'_>) -> String {
    match e {
        CaughtError::Exception(ex) => match ex.stack() {
            Some(stack) if !stack.trim().is_empty() => {
                format!("{}\n{}", thrown(e), stack.trim_end())
            }
            _ => thrown(e),
        },
        _ => thrown(e),
    }
}

/// `String(value)`, as JavaScript would print it.
fn to_text(v: &Value<'_>) -> String {
    if let Some(s) = v.as_string() {
        return s.to_string().unwrap_or_default();
    }
    let ctx = v.ctx();
    ctx.globals()
        .get::<_, Function>("String")
        .and_then(|f| f.call::<_, String>((v.clone(),)))
        .unwrap_or_else(|_| kind(v).to_owned())
}
