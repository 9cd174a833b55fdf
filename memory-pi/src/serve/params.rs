//! Typed access to request parameters; every failure is a `-32602` naming the field.

use serde_json::Value;

use super::rpc::RpcError;

/// The `params` of one request.
#[derive(Clone, Copy)]
pub struct Params<'a>(pub &'a Value);

impl<'a> Params<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// A required string.
    pub fn str(&self, key: &str) -> Result<&'a str, RpcError> {
        match self.get(key) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(RpcError::invalid_params(format!(
                "invalid params: \"{key}\" must be a string"
            ))),
            None => Err(RpcError::invalid_params(format!(
                "invalid params: \"{key}\" is required"
            ))),
        }
    }

    /// An optional string (`null` and absent are `None`).
    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, RpcError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(RpcError::invalid_params(format!(
                "invalid params: \"{key}\" must be a string or null"
            ))),
        }
    }

    /// An optional boolean with a default.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, RpcError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(RpcError::invalid_params(format!(
                "invalid params: \"{key}\" must be a boolean"
            ))),
        }
    }

    /// An optional array (absent or `null` is empty).
    pub fn array(&self, key: &str) -> Result<&'a [Value], RpcError> {
        match self.get(key) {
            None => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(RpcError::invalid_params(format!(
                "invalid params: \"{key}\" must be an array"
            ))),
        }
    }

    /// A required value of any type.
    pub fn value(&self, key: &str) -> Result<&'a Value, RpcError> {
        self.0.get(key).ok_or_else(|| {
            RpcError::invalid_params(format!("invalid params: \"{key}\" is required"))
        })
    }

    /// An optional value of any type (`null` is `None`).
    pub fn opt_value(&self, key: &str) -> Option<&'a Value> {
        self.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_field() {
        let v = json!({ "a": "x", "n": 3, "b": true, "arr": [1], "nul": null });
        let p = Params(&v);
        assert_eq!(p.str("a").unwrap(), "x");
        assert_eq!(
            p.str("n").unwrap_err().message,
            "invalid params: \"n\" must be a string"
        );
        assert_eq!(
            p.str("zz").unwrap_err().message,
            "invalid params: \"zz\" is required"
        );
        assert_eq!(p.opt_str("nul").unwrap(), None);
        assert!(p.opt_str("b").is_err());
        assert!(p.bool_or("b", false).unwrap());
        assert!(p.bool_or("missing", true).unwrap());
        assert_eq!(p.bool_or("a", true).unwrap_err().code, -32602);
        assert_eq!(p.array("arr").unwrap().len(), 1);
        assert!(p.array("missing").unwrap().is_empty());
        assert!(p.array("a").is_err());
        assert!(p.value("nul").is_ok());
        assert!(p.opt_value("nul").is_none());
    }
}
