//! `pimem mcp --http ADDR`: streamable HTTP on a loopback address, for clients that cannot
//! spawn a process.
//!
//! Three gates run before the MCP layer sees a request, so neither a web page nor another
//! local user can reach the memory:
//! 1. **Loopback only.** The listening address must be a loopback IP (`127.0.0.1`, `::1`);
//!    anything else is refused at start. `rmcp` also checks the `Host` header against
//!    `localhost`/`127.0.0.1`/`::1` (DNS rebinding).
//! 2. **Origin.** A request that carries an `Origin` header is refused with 403 unless the
//!    origin is this server's own (`http://127.0.0.1:PORT`, `http://localhost:PORT`,
//!    `http://[::1]:PORT`): a page on any other origin, including a rebinding domain that
//!    resolves to 127.0.0.1, gets nothing (the MCP specification's requirement for
//!    streamable HTTP). Requests without `Origin` (non-browser clients) pass this gate.
//! 3. **Bearer token.** Every request needs `Authorization: Bearer <token>`: 32 random bytes
//!    from the OS, hex-encoded, generated at launch and printed on stderr (or written to
//!    `--token-file` with mode 0600). Missing or wrong: 401 with `WWW-Authenticate: Bearer`.
//!    The comparison takes the same time whatever the mismatch.
//!
//! The MCP endpoint is `/mcp`; other paths get 404.

use std::convert::Infallible;
use std::io::Read as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, HeaderValue, ORIGIN, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower_service::Service as _;

use super::server::{PimemMcp, Shared};

/// The endpoint path.
pub const ENDPOINT: &str = "/mcp";

/// How the HTTP transport was asked for.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen: a loopback IP and a port (`0` picks a free one).
    pub addr: SocketAddr,
    /// Also write the token to this file (mode 0600) for scripts.
    pub token_file: Option<PathBuf>,
}

/// Parses `--http`: `PORT`, `HOST:PORT` with a loopback IP, or `localhost:PORT`.
///
/// # Errors
/// A non-loopback address, or text that is not an address.
pub fn parse_addr(text: &str) -> Result<SocketAddr> {
    let text = text.trim();
    let addr: SocketAddr = if let Ok(port) = text.parse::<u16>() {
        SocketAddr::from(([127, 0, 0, 1], port))
    } else if let Some(port) = text.strip_prefix("localhost:") {
        let port: u16 = port
            .parse()
            .with_context(|| format!("--http: bad port in {text:?}"))?;
        SocketAddr::from(([127, 0, 0, 1], port))
    } else {
        text.parse()
            .with_context(|| format!("--http: {text:?} is not PORT, IP:PORT or localhost:PORT"))?
    };
    if !addr.ip().is_loopback() {
        bail!(
            "--http: refusing to listen on {addr}: only loopback addresses (127.0.0.1, [::1]) are allowed, so that no other machine can reach the memory"
        );
    }
    Ok(addr)
}

/// A fresh 256-bit token, hex-encoded.
fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom for the bearer token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Byte comparison whose time does not depend on where the first difference is.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn refusal(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{message}\n"))).boxed());
    *response.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The gates in front of the MCP service.
struct Gate {
    token: String,
    origins: Vec<String>,
}

impl Gate {
    fn check<B>(&self, req: &Request<B>) -> Option<Response<Body>> {
        if req.uri().path() != ENDPOINT {
            return Some(refusal(
                StatusCode::NOT_FOUND,
                "not found: the endpoint is /mcp",
            ));
        }
        if let Some(origin) = req.headers().get(ORIGIN) {
            let allowed = origin
                .to_str()
                .is_ok_and(|o| self.origins.iter().any(|a| a == o));
            if !allowed {
                return Some(refusal(
                    StatusCode::FORBIDDEN,
                    "forbidden: this Origin may not use the pimem MCP server",
                ));
            }
        }
        let presented = req
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        match presented {
            Some(t) if same(t.as_bytes(), self.token.as_bytes()) => None,
            _ => Some(refusal(
                StatusCode::UNAUTHORIZED,
                "unauthorized: send Authorization: Bearer <the token pimem mcp printed at launch>",
            )),
        }
    }
}

/// Serves streamable HTTP until interrupted (Ctrl-C / SIGINT).
pub(crate) async fn serve(shared: Arc<Shared>, opts: HttpOptions) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(opts.addr)
        .await
        .with_context(|| format!("cannot listen on {}", opts.addr))?;
    let addr = listener.local_addr()?;
    let token = new_token()?;
    if let Some(path) = &opts.token_file {
        let path = camino::Utf8Path::from_path(path)
            .with_context(|| format!("--token-file {} is not UTF-8", path.display()))?;
        memory_core::write_private_file(path, format!("{token}\n").as_bytes())
            .with_context(|| format!("cannot write the token to {path}"))?;
    }
    let port = addr.port();
    let gate = Arc::new(Gate {
        token: token.clone(),
        origins: vec![
            format!("http://127.0.0.1:{port}"),
            format!("http://localhost:{port}"),
            format!("http://[::1]:{port}"),
            format!("http://{addr}"),
        ],
    });
    let config =
        StreamableHttpServerConfig::default().with_allowed_hosts(["localhost", "127.0.0.1", "::1"]);
    let factory_shared = shared.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(PimemMcp::new(factory_shared.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    eprintln!("pimem mcp: listening on http://{addr}{ENDPOINT}");
    match &opts.token_file {
        Some(path) => eprintln!("pimem mcp: bearer token written to {}", path.display()),
        None => eprintln!("pimem mcp: bearer token: {token}"),
    }
    // One listener for the whole loop: a `ctrl_c()` made anew per iteration misses a SIGINT
    // that arrives while a connection is being accepted (seen: the e2e's SIGINT after the
    // client's session DELETE was lost and the server kept running).
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        let stream = tokio::select! {
            _ = &mut interrupted => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    eprintln!("pimem mcp: accept failed: {e}");
                    continue;
                }
            },
        };
        let gate = gate.clone();
        let mcp = mcp.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let refused = gate.check(&req);
                let mut mcp = mcp.clone();
                async move {
                    match refused {
                        Some(response) => Ok::<_, Infallible>(response),
                        None => mcp.call(req).await,
                    }
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                eprintln!("pimem mcp: connection error: {e}");
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        assert_eq!(parse_addr("8080").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(
            parse_addr("localhost:0").unwrap().to_string(),
            "127.0.0.1:0"
        );
        assert_eq!(parse_addr("[::1]:9").unwrap().to_string(), "[::1]:9");
        assert_eq!(
            parse_addr("127.0.0.2:9").unwrap().to_string(),
            "127.0.0.2:9"
        );
        for bad in ["0.0.0.0:80", "192.168.1.2:80", "[::]:80", "example.com:80"] {
            assert!(parse_addr(bad).is_err(), "{bad}");
        }
        let err = parse_addr("0.0.0.0:80").unwrap_err().to_string();
        assert!(err.contains("only loopback"), "{err}");
    }

    #[test]
    fn tokens_are_256_bits_and_compared_in_full() {
        let a = new_token().unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, new_token().unwrap());
        assert!(same(a.as_bytes(), a.as_bytes()));
        assert!(!same(a.as_bytes(), &a.as_bytes()[..63]));
        assert!(!same(b"abc", b"abd"));
    }

    fn request(path: &str, headers: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().uri(path);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap()
    }

    #[test]
    fn the_gate_refuses_foreign_origins_and_missing_tokens() {
        let gate = Gate {
            token: "t0k".into(),
            origins: vec!["http://127.0.0.1:5".into()],
        };
        let status = |r: Option<Response<Body>>| r.map(|r| r.status());
        let auth = ("authorization", "Bearer t0k");
        assert_eq!(status(gate.check(&request("/mcp", &[auth]))), None);
        assert_eq!(
            status(gate.check(&request("/mcp", &[auth, ("origin", "http://127.0.0.1:5")]))),
            None
        );
        assert_eq!(
            status(gate.check(&request("/mcp", &[auth, ("origin", "http://evil.example")]))),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(gate.check(&request("/mcp", &[auth, ("origin", "http://127.0.0.1:6")]))),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(gate.check(&request("/mcp", &[]))),
            Some(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            status(gate.check(&request("/mcp", &[("authorization", "Bearer nope")]))),
            Some(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            status(gate.check(&request("/other", &[auth]))),
            Some(StatusCode::NOT_FOUND)
        );
    }
}
