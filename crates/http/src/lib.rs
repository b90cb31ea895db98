//! hookbox-http: the runner of Claude Code's `http` hooks (SPEC §4.2a).
//!
//! A hook POSTs the event's payload JSON to its rule's URL and the answer is read as Claude
//! Code reads it: a 2xx with a JSON object body is that object, as a command hook's JSON on
//! exit 0; a 2xx with an empty body is success with nothing to add; anything else — another
//! status, a redirect (never followed), a body that is neither, a body over the cap, a refused
//! destination, no connection — is a failure of class `http_error`, and the hook's timeout one
//! of class `timeout`. What a failure means for the verdict (fail open, or `onFailure:
//! "block"`) is the rule's business, in `hookbox-core`.
//!
//! Where a hook may send the payload is an [`HttpPolicy`]: anywhere for one developer's own
//! settings (as Claude Code), nowhere for a tenant unless the host turns it on, and then only
//! to allow-listed destinations. The name is resolved once, each address checked, and the
//! connection made to a checked address (no DNS-rebinding bypass); loopback, private,
//! link-local (cloud metadata), CGNAT and unique-local addresses need an entry naming the
//! address or a CIDR block inside its special range (a wider block such as `0.0.0.0/0` does not
//! open them).
//!
//! The client is hyper's HTTP/1.1 over tokio, with rustls (ring provider, Mozilla's roots) for
//! `https`; no proxy support (`HTTP_PROXY` is ignored, as a proxy would defeat the address
//! check). One [`HttpRunner`] holds one connection pool, shared by its clones.

mod connect;
mod destination;
mod error;
mod headers;
mod limits;
mod policy;
mod pool;
mod resolve;
mod runner;
mod special;
mod target;
mod tls;

pub use destination::Destination;
pub use error::HttpError;
pub use limits::HttpLimits;
pub use policy::HttpPolicy;
pub use resolve::{Resolve, Resolving, SystemResolver};
pub use runner::{DEFAULT_TIMEOUT, HttpRequest, HttpRun, HttpRunner, USER_AGENT_VALUE};
