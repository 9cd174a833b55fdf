//! The transport: newline-delimited JSON-RPC 2.0 in both directions over one byte stream
//! pair.
//!
//! [`Peer`] is the sending half, shared by every thread: responses, notifications and our
//! own requests to pi (whose replies come back through [`Peer::deliver`] from the reader
//! thread). [`read_line_capped`] is the framing of the reading half.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use memory_agent::CancelToken;
use parking_lot::Mutex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::protocol::{Notify, Request};

/// Longest accepted line (16 MiB); longer lines are discarded and answered with -32600.
pub(super) const MAX_LINE_BYTES: usize = 16 << 20;

/// JSON-RPC error codes used on this connection.
pub(super) mod code {
    /// Malformed JSON.
    pub(crate) const PARSE_ERROR: i64 = -32700;
    /// Not a valid request (including lines over [`super::MAX_LINE_BYTES`]).
    pub(crate) const INVALID_REQUEST: i64 = -32600;
    /// Unknown method.
    pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
    /// Missing or mistyped parameter.
    pub(crate) const INVALID_PARAMS: i64 = -32602;
    /// A handler failed unexpectedly.
    pub(crate) const INTERNAL_ERROR: i64 = -32603;
    /// `initialize` with a protocol number this binary does not speak.
    pub(crate) const PROTOCOL_MISMATCH: i64 = -32002;
    /// `initialize` from the pi extension of another pimem version.
    pub(crate) const VERSION_MISMATCH: i64 = -32003;
    /// `model/complete`: the model cannot be resolved (sent by pi).
    pub(crate) const MODEL_UNRESOLVABLE: i64 = -32010;
    /// `model/complete`: the provider call failed (sent by pi).
    pub(crate) const MODEL_FAILED: i64 = -32011;
}

/// An error response (ours or pi's).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// JSON-RPC error code.
    pub code: i64,
    /// Human-readable message (shown to the user in some cases).
    pub message: String,
    /// Optional structured data.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602` naming the offending field.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    fn to_json(&self) -> Value {
        let mut e = json!({ "code": self.code, "message": self.message });
        if let Some(d) = &self.data {
            e["data"] = d.clone();
        }
        e
    }

    fn from_json(v: &Value) -> Self {
        RpcError {
            code: v.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: v
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error without message")
                .to_owned(),
            data: v.get("data").cloned(),
        }
    }
}

/// Why one of our requests to pi did not produce a result.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum CallError {
    /// No reply before the timeout.
    Timeout,
    /// The caller cancelled while waiting.
    Cancelled,
    /// The connection closed (pi exited or closed our stdin).
    Closed,
    /// pi answered with an error.
    Rpc(RpcError),
    /// pi's result does not have the method's result type (the message says why).
    Malformed(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Timeout => f.write_str("pi did not answer in time"),
            CallError::Cancelled => f.write_str("cancelled"),
            CallError::Closed => f.write_str("pi closed the connection"),
            CallError::Rpc(e) => f.write_str(&e.message),
            CallError::Malformed(e) => write!(f, "pi answered with a malformed result: {e}"),
        }
    }
}

type Reply = Result<Value, RpcError>;

/// The sending half of the connection plus the table of requests awaiting pi's reply.
pub(super) struct Peer {
    out: Mutex<Box<dyn Write + Send>>,
    pending: Mutex<HashMap<u64, mpsc::Sender<Reply>>>,
    next_id: AtomicU64,
    closed: AtomicBool,
}

impl Peer {
    /// A peer writing to `out`.
    pub(super) fn new(out: Box<dyn Write + Send>) -> Self {
        Peer {
            out: Mutex::new(out),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            closed: AtomicBool::new(false),
        }
    }

    /// Writes one message as one line and flushes. Write errors (pi gone) are ignored: the
    /// reader sees EOF and shuts the sidecar down.
    fn send(&self, msg: &Value) {
        let mut line = msg.to_string();
        line.push('\n');
        let mut out = self.out.lock();
        let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
    }

    /// Sends a notification (no reply expected).
    pub(super) fn notify<N: Notify + Serialize>(&self, params: &N) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(&json!({ "jsonrpc": "2.0", "method": N::METHOD, "params": params }));
    }

    /// Sends a request to pi and blocks until its reply, `timeout`, or `cancel`; the reply is
    /// read as the method's result type.
    pub(super) fn call<R>(
        &self,
        params: &R,
        timeout: Duration,
        cancel: Option<&CancelToken>,
    ) -> Result<R::Result, CallError>
    where
        R: Request + Serialize,
        R::Result: DeserializeOwned,
    {
        let params =
            serde_json::to_value(params).map_err(|e| CallError::Malformed(e.to_string()))?;
        let result = self.request(R::METHOD, params, timeout, cancel)?;
        serde_json::from_value(result).map_err(|e| CallError::Malformed(e.to_string()))
    }

    /// Answers request `id`.
    pub(super) fn respond(&self, id: Value, reply: Reply) {
        let msg = match reply {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(e) => json!({ "jsonrpc": "2.0", "id": id, "error": e.to_json() }),
        };
        self.send(&msg);
    }

    /// Sends a request to pi and blocks until its reply, `timeout`, or `cancel`.
    fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: Option<&CancelToken>,
    ) -> Result<Value, CallError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        {
            let mut pending = self.pending.lock();
            if self.closed.load(Ordering::SeqCst) {
                return Err(CallError::Closed);
            }
            pending.insert(id, tx);
        }
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let deadline = Instant::now() + timeout;
        let outcome = loop {
            if cancel.is_some_and(CancelToken::is_cancelled) {
                break Err(CallError::Cancelled);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break Err(CallError::Timeout);
            }
            // Poll in short slices only when someone may cancel.
            let slice = if cancel.is_some() {
                left.min(Duration::from_millis(50))
            } else {
                left
            };
            match rx.recv_timeout(slice) {
                Ok(Ok(v)) => break Ok(v),
                Ok(Err(e)) => break Err(CallError::Rpc(e)),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break Err(CallError::Closed),
            }
        };
        self.pending.lock().remove(&id);
        outcome
    }

    /// Routes a response read from pi to the request waiting for it. Responses to unknown
    /// ids (late replies after a timeout) are dropped.
    pub(super) fn deliver(&self, msg: &Value) {
        let Some(id) = msg.get("id").and_then(Value::as_u64) else {
            return;
        };
        let reply = match msg.get("error") {
            Some(e) if !e.is_null() => Err(RpcError::from_json(e)),
            _ => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
        };
        if let Some(tx) = self.pending.lock().remove(&id) {
            let _ = tx.send(reply);
        }
    }

    /// Marks the connection closed: every waiting and future request fails with
    /// [`CallError::Closed`].
    pub(super) fn close(&self) {
        let mut pending = self.pending.lock();
        self.closed.store(true, Ordering::SeqCst);
        pending.clear(); // dropping the senders wakes the waiters
    }
}

/// One framed line from the reader.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Framed {
    /// A complete line (without its `\n` or `\r\n`) is in the buffer.
    Complete,
    /// The line exceeded the cap; its bytes were discarded up to and including the newline.
    TooLong,
    /// End of input (a final unterminated line is returned as [`Framed::Complete`] first).
    Eof,
}

/// Reads one `\n`-terminated line into `buf` (cleared first), refusing lines over `cap`
/// bytes without ever holding more than `cap` bytes.
pub(super) fn read_line_capped(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Framed> {
    buf.clear();
    let mut too_long = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if too_long {
                Framed::TooLong
            } else if buf.is_empty() {
                Framed::Eof
            } else {
                Framed::Complete
            });
        }
        let (take, done) = match memchr_newline(chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > cap {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(if done { take + 1 } else { take });
        if done {
            if too_long {
                return Ok(Framed::TooLong);
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Framed::Complete);
        }
    }
}

fn memchr_newline(s: &[u8]) -> Option<usize> {
    s.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<(Framed, String)> {
        let mut r = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            let l = read_line_capped(&mut r, &mut buf, cap).unwrap();
            let text = String::from_utf8_lossy(&buf).into_owned();
            let eof = l == Framed::Eof;
            out.push((l, text));
            if eof {
                return out;
            }
        }
    }

    #[test]
    fn framing_splits_on_newline_strips_cr_and_keeps_a_final_partial_line() {
        let got = lines(b"{\"a\":1}\r\n\nlast", 100);
        assert_eq!(
            got,
            vec![
                (Framed::Complete, "{\"a\":1}".to_owned()),
                (Framed::Complete, String::new()),
                (Framed::Complete, "last".to_owned()),
                (Framed::Eof, String::new()),
            ]
        );
    }

    #[test]
    fn over_long_lines_are_discarded_and_the_next_line_still_arrives() {
        let got = lines(b"0123456789abc\nok\n", 10);
        assert_eq!(got[0].0, Framed::TooLong);
        assert_eq!(got[1], (Framed::Complete, "ok".to_owned()));
        // exactly at the cap is fine
        let got = lines(b"0123456789\n", 10);
        assert_eq!(got[0], (Framed::Complete, "0123456789".to_owned()));
        // an over-long unterminated tail
        let got = lines(b"0123456789abc", 10);
        assert_eq!(got[0].0, Framed::TooLong);
        assert_eq!(got[1].0, Framed::Eof);
    }

    proptest::proptest! {
        /// Whatever the chunking, each line comes back whole (without `\r\n`), or as
        /// `TooLong` when over the cap, and the lines after it are unaffected.
        #[test]
        fn framing_matches_a_plain_split(
            lines in proptest::collection::vec(proptest::collection::vec(0u8..=255, 0..40), 0..12),
            cap in 0usize..32,
            chunk in 1usize..9,
            crlf in proptest::bool::ANY,
        ) {
            let lines: Vec<Vec<u8>> = lines
                .into_iter()
                .map(|l| l.into_iter().filter(|&b| b != b'\n' && b != b'\r').collect())
                .collect();
            let mut input = Vec::new();
            for l in &lines {
                input.extend_from_slice(l);
                input.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            }
            let mut r = io::BufReader::with_capacity(chunk, input.as_slice());
            let mut buf = Vec::new();
            for l in &lines {
                let got = read_line_capped(&mut r, &mut buf, cap).unwrap();
                // the cap counts the bytes before `\n`, including a `\r`
                let raw = l.len() + usize::from(crlf);
                if raw > cap {
                    proptest::prop_assert_eq!(got, Framed::TooLong);
                } else {
                    proptest::prop_assert_eq!(got, Framed::Complete);
                    proptest::prop_assert_eq!(&buf, l);
                }
            }
            proptest::prop_assert_eq!(read_line_capped(&mut r, &mut buf, cap).unwrap(), Framed::Eof);
        }
    }

    #[derive(Clone, Default)]
    struct Sink(std::sync::Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn requests_are_routed_by_id_and_time_out_or_close_cleanly() {
        let sink = Sink::default();
        let peer = std::sync::Arc::new(Peer::new(Box::new(sink.clone())));
        let p2 = peer.clone();
        let waiter =
            std::thread::spawn(move || p2.request("ping", json!({}), Duration::from_secs(5), None));
        // wait until the request was written, then answer it
        let id = loop {
            let text = String::from_utf8(sink.0.lock().clone()).unwrap();
            if let Some(line) = text.lines().next() {
                let v: Value = serde_json::from_str(line).unwrap();
                assert_eq!(v["method"], "ping");
                break v["id"].clone();
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        peer.deliver(&json!({"jsonrpc":"2.0","id":id,"result":{"pong":true}}));
        assert_eq!(waiter.join().unwrap(), Ok(json!({"pong": true})));

        let err = peer.request("slow", json!({}), Duration::from_millis(20), None);
        assert_eq!(err, Err(CallError::Timeout));

        let cancel = CancelToken::new();
        cancel.cancel();
        let err = peer.request("x", json!({}), Duration::from_secs(5), Some(&cancel));
        assert_eq!(err, Err(CallError::Cancelled));

        let p3 = peer.clone();
        let waiter = std::thread::spawn(move || {
            p3.request("never", json!({}), Duration::from_secs(30), None)
        });
        std::thread::sleep(Duration::from_millis(20));
        peer.close();
        assert_eq!(waiter.join().unwrap(), Err(CallError::Closed));
        assert_eq!(
            peer.request("after", json!({}), Duration::from_secs(1), None),
            Err(CallError::Closed)
        );
    }

    #[test]
    fn error_replies_keep_code_message_and_data() {
        let peer = std::sync::Arc::new(Peer::new(Box::new(Sink::default())));
        let p2 = peer.clone();
        let waiter = std::thread::spawn(move || {
            p2.request("model/complete", json!({}), Duration::from_secs(5), None)
        });
        loop {
            if !peer.pending.lock().is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let id = *peer.pending.lock().keys().next().unwrap();
        peer.deliver(&json!({"id": id, "error": {"code": -32011, "message": "429 rate limited"}}));
        assert_eq!(
            waiter.join().unwrap(),
            Err(CallError::Rpc(RpcError::new(
                code::MODEL_FAILED,
                "429 rate limited"
            )))
        );
    }
}
