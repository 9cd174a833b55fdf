//! The OpenAI-compatible HTTP model against a tiny local fake server (std `TcpListener`):
//! the request body (model, messages, tools), a scripted tool call then a stop driving the
//! headless agent, error texts without the API key, deadlines and cancellation.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use memory_agent::agent::{AgentSpec, run_agent};
use memory_agent::http::{HttpModel, parse_response};
use memory_agent::{
    CancelToken, CompletionRequest, HttpModel as Reexported, MemoryTool, Message, Model,
    ModelError, StopReason, Task, ToolCall,
};
use memory_core::tool::MAIN_ACTIONS;
use memory_core::{Store, StoreOptions};
use serde_json::{Value, json};

/// One received request: headers (lower-cased names) and the JSON body.
#[derive(Debug, Clone)]
struct Received {
    request_line: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct FakeServer {
    base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    handle: JoinHandle<()>,
}

fn read_request(stream: &mut TcpStream) -> Received {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').unwrap();
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map(|(_, v)| v.parse().unwrap())
        .expect("the client sends a Content-Length");
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    Received {
        request_line: request_line.trim_end().to_owned(),
        headers,
        body: serde_json::from_slice(&body).unwrap(),
    }
}

/// Serves one scripted `(status, body)` per connection, then stops.
fn serve(responses: Vec<(u16, String)>) -> FakeServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
    let log = received.clone();
    let handle = std::thread::spawn(move || {
        for (status, body) in responses {
            let (mut stream, _) = listener.accept().unwrap();
            let req = read_request(&mut stream);
            log.lock().unwrap().push(req);
            let reason = if status == 200 { "OK" } else { "Error" };
            write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            stream.flush().unwrap();
        }
    });
    FakeServer {
        base_url,
        received,
        handle,
    }
}

fn request(messages: Vec<Message>, tools: bool) -> CompletionRequest {
    let sb = testkit::Sandbox::new();
    let store = Store::new(sb.path("mem"), StoreOptions::default());
    CompletionRequest {
        task: Task::ExtractMemories,
        system: "sys".into(),
        messages,
        tools: if tools {
            vec![MemoryTool::new(&store).def()]
        } else {
            vec![]
        },
        deadline: Instant::now() + Duration::from_secs(10),
        cancel: CancelToken::new(),
    }
}

#[test]
fn drives_the_agent_through_a_scripted_tool_call_then_a_stop() {
    let tool_call = json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_abc", "type": "function", "function": {
                "name": "memory",
                "arguments": "{\"action\":\"add\",\"name\":\"Staging SSH port\",\"content\":\"staging SSH listens on 2222, not 22.\"}"
            }}]
        }}]
    });
    let stop = json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Saved one memory."}}]
    });
    let server = serve(vec![(200, tool_call.to_string()), (200, stop.to_string())]);
    // The provider's own id, sent as given (a host strips its `provider/` prefix first).
    let model = HttpModel::new(format!("{}/", server.base_url), "qwen/qwen3-8b")
        .with_api_key("sk-test-secret");
    let sb = testkit::Sandbox::new();
    let store = Store::new(sb.path("mem"), StoreOptions::default());
    let spec = AgentSpec {
        task: Task::ExtractMemories,
        system: "You are a memory agent.".into(),
        prompt: "Remember: staging SSH is on 2222.".into(),
        max_turns: Some(5),
        timeout: Duration::from_secs(20),
    };
    let run = run_agent(
        &model,
        &mut MemoryTool::new(&store),
        &spec,
        &[],
        &CancelToken::new(),
    )
    .unwrap();
    server.handle.join().unwrap();
    assert_eq!(run.text, "Saved one memory.");
    assert_eq!(run.writes, 1);
    assert!(sb.path("mem/Staging-SSH-port.md").exists());

    let got = server.received.lock().unwrap().clone();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        got[0].header("authorization"),
        Some("Bearer sk-test-secret")
    );
    assert_eq!(got[0].header("content-type"), Some("application/json"));
    let first = &got[0].body;
    assert_eq!(
        first["model"], "qwen/qwen3-8b",
        "the model id is sent verbatim"
    );
    assert_eq!(first["stream"], false);
    assert!(first.get("reasoning_effort").is_none());
    assert_eq!(
        first["messages"],
        json!([
            {"role": "system", "content": "You are a memory agent."},
            {"role": "user", "content": "Remember: staging SSH is on 2222."}
        ])
    );
    let tool = &first["tools"][0];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], "memory");
    assert_eq!(
        tool["function"]["description"],
        memory_core::tool::TOOL_DESCRIPTION
    );
    assert_eq!(
        tool["function"]["parameters"],
        memory_core::tool::parameters_schema(MAIN_ACTIONS)
    );
    // The second request carries the assistant tool call and the tool result.
    let msgs = got[1].body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[2]["role"], "assistant");
    assert_eq!(msgs[2]["content"], Value::Null);
    assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_abc");
    let args: Value = serde_json::from_str(
        msgs[2]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(args["name"], "Staging SSH port");
    assert_eq!(
        msgs[3],
        json!({"role": "tool", "tool_call_id": "call_abc",
               "content": "Saved \"Staging SSH port\" (Staging-SSH-port.md)."})
    );
}

#[test]
fn errors_name_the_status_and_provider_message_but_never_the_key() {
    let body = json!({"error": {"message": "Incorrect API key provided: sk-test-secret. Check it.", "type": "invalid_request_error"}});
    let server = serve(vec![
        (401, body.to_string()),
        (500, "upstream exploded".into()),
    ]);
    let model = HttpModel::new(&server.base_url, "m").with_api_key("sk-test-secret");
    let err = model
        .complete(&request(
            vec![Message::User {
                content: "hi".into(),
            }],
            false,
        ))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("HTTP 401 from http://127.0.0.1:"),
        "{text}"
    );
    assert!(
        text.ends_with("/v1/chat/completions: Incorrect API key provided: ***. Check it."),
        "{text}"
    );
    assert!(!text.contains("sk-test-secret"));
    let err = model
        .complete(&request(
            vec![Message::User {
                content: "hi".into(),
            }],
            false,
        ))
        .unwrap_err();
    assert!(err.to_string().ends_with(": upstream exploded"), "{err}");
    server.handle.join().unwrap();
    assert!(!format!("{model:?}").contains("sk-test-secret"));
    let _: &Reexported = &model;
}

#[test]
fn deadline_and_cancellation() {
    // A server that accepts and never answers: the request times out at the deadline.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let hold = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        drop(stream);
    });
    let model = HttpModel::new(&base, "m");
    let mut req = request(
        vec![Message::User {
            content: "hi".into(),
        }],
        true,
    );
    req.deadline = Instant::now() + Duration::from_millis(300);
    assert_eq!(model.complete(&req), Err(ModelError::Timeout));
    hold.join().unwrap();

    // Past deadline or cancelled: nothing is sent (the port is closed by now).
    req.deadline = Instant::now();
    assert_eq!(model.complete(&req), Err(ModelError::Timeout));
    let req = request(vec![], false);
    req.cancel.cancel();
    assert_eq!(model.complete(&req), Err(ModelError::Cancelled));
}

#[test]
fn request_body_shapes() {
    let model = HttpModel::new("http://x/v1", "gpt-4o")
        .with_reasoning_effort("high")
        .with_max_tokens(512);
    let req = request(
        vec![
            Message::User {
                content: "q".into(),
            },
            Message::Assistant {
                text: "thinking out loud".into(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "memory".into(),
                    arguments: Value::String("{not json".into()),
                }],
            },
            Message::ToolResult {
                call_id: "c1".into(),
                name: "memory".into(),
                content: "arguments must be a JSON object".into(),
                is_error: true,
            },
            Message::Assistant {
                text: "done".into(),
                tool_calls: vec![],
            },
        ],
        false,
    );
    let body = model.request_body(&req);
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["reasoning_effort"], "high");
    assert_eq!(body["max_tokens"], 512);
    assert!(body.get("tools").is_none(), "no tools, no field");
    assert_eq!(body["messages"][2]["content"], "thinking out loud");
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{not json",
        "a raw string argument is sent back as it came"
    );
    assert_eq!(
        body["messages"][4],
        json!({"role": "assistant", "content": "done"})
    );
    // Thinking levels: `off` (or an unknown level) sends nothing; `xhigh`/`max` are `high`.
    for (level, want) in [
        ("off", None),
        ("bogus", None),
        ("minimal", Some("minimal")),
        ("low", Some("low")),
        ("medium", Some("medium")),
        ("xhigh", Some("high")),
        ("max", Some("high")),
    ] {
        let body = HttpModel::new("http://x/v1", "gpt-4o")
            .with_reasoning_effort(level)
            .request_body(&req);
        assert_eq!(
            body.get("reasoning_effort").and_then(Value::as_str),
            want,
            "{level}"
        );
    }
    let plain = HttpModel::new("http://x/v1", "gpt-4o").request_body(&req);
    assert!(plain.get("reasoning_effort").is_none(), "not set: not sent");
}

#[test]
fn response_parsing() {
    let c = parse_response(
        &json!({"choices": [{"finish_reason": "tool_calls", "message": {"content": "",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "memory", "arguments": "{\"action\":\"list\"}"}},
                {"id": "b", "type": "function", "function": {"name": "memory", "arguments": "{oops"}},
                {"id": "c", "type": "function", "function": {"name": "memory", "arguments": ""}},
                {"type": "function", "function": {"name": "memory", "arguments": {"action": "list"}}}
            ]}}]})
        .to_string(),
    )
    .unwrap();
    assert_eq!(c.stop_reason, StopReason::ToolUse);
    let args: Vec<Value> = c.tool_calls.iter().map(|t| t.arguments.clone()).collect();
    assert_eq!(
        args,
        [
            json!({"action": "list"}),
            json!("{oops"),
            json!({}),
            json!({"action": "list"})
        ]
    );
    assert_eq!(c.tool_calls[3].id, "call_3");
    let reasons = [
        ("stop", StopReason::Stop),
        ("length", StopReason::Length),
        ("content_filter", StopReason::Error),
        ("function_call", StopReason::ToolUse),
    ];
    for (wire, want) in reasons {
        let c = parse_response(
            &json!({"choices": [{"finish_reason": wire, "message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]}).to_string(),
        )
        .unwrap();
        assert_eq!((c.stop_reason, c.text.as_str()), (want, "ab"), "{wire}");
    }
    assert!(parse_response("not json").is_err());
    assert_eq!(
        parse_response("{\"choices\":[]}").unwrap_err().to_string(),
        "the model server sent no choices"
    );
}
