//! What the standard `OTEL_*` variables ask for, read once and checked: an
//! unsupported protocol or exporter is a boot error, never a silent default.

use crate::TelemetryError;

/// The protocol this build exports OTLP with.
const HTTP_PROTOBUF: &str = "http/protobuf";

/// Which OTLP signals to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Export {
    pub traces: bool,
    pub metrics: bool,
}

impl Export {
    /// Reads the variables through `var` (the environment, or a test's map).
    ///
    /// A signal is exported when an endpoint is set for it
    /// (`OTEL_EXPORTER_OTLP_{SIGNAL}_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`)
    /// and `OTEL_{SIGNAL}_EXPORTER` is unset or `otlp`; `none` turns it off;
    /// `OTEL_SDK_DISABLED=true` turns both off.
    pub(crate) fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, TelemetryError> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(Self::default());
        }
        let signal = |name: &str, exporter_var: &str| -> Result<bool, TelemetryError> {
            match set(exporter_var).as_deref().map(str::trim) {
                None | Some("otlp") => {}
                Some("none") => return Ok(false),
                Some(other) => {
                    return Err(TelemetryError::Unsupported(format!(
                        "{exporter_var}={other}: this build exports with otlp (or none)"
                    )));
                }
            }
            let endpoint = set(&format!("OTEL_EXPORTER_OTLP_{name}_ENDPOINT"))
                .or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"));
            if endpoint.is_none() {
                return Ok(false);
            }
            for protocol_var in [
                format!("OTEL_EXPORTER_OTLP_{name}_PROTOCOL"),
                "OTEL_EXPORTER_OTLP_PROTOCOL".to_owned(),
            ] {
                if let Some(protocol) = set(&protocol_var) {
                    if protocol.trim() != HTTP_PROTOBUF {
                        return Err(TelemetryError::Unsupported(format!(
                            "{protocol_var}={protocol}: this build exports OTLP over {HTTP_PROTOBUF} only"
                        )));
                    }
                    break;
                }
            }
            Ok(true)
        };
        Ok(Self {
            traces: signal("TRACES", "OTEL_TRACES_EXPORTER")?,
            metrics: signal("METRICS", "OTEL_METRICS_EXPORTER")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(vars: &[(&str, &str)]) -> Result<Export, TelemetryError> {
        Export::from_vars(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn nothing_is_exported_unless_an_endpoint_is_configured() {
        assert_eq!(export(&[]).unwrap(), Export::default());
        assert_eq!(
            export(&[("OTEL_SERVICE_NAME", "x")]).unwrap(),
            Export::default()
        );
    }

    #[test]
    fn one_endpoint_exports_both_signals_and_each_can_be_turned_off() {
        let both = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")];
        assert_eq!(
            export(&both).unwrap(),
            Export {
                traces: true,
                metrics: true
            }
        );
        let traces_only = [
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://127.0.0.1:4318/v1/traces",
            ),
            ("OTEL_METRICS_EXPORTER", "none"),
        ];
        assert_eq!(
            export(&traces_only).unwrap(),
            Export {
                traces: true,
                metrics: false
            }
        );
        let disabled = [both[0], ("OTEL_SDK_DISABLED", "true")];
        assert_eq!(export(&disabled).unwrap(), Export::default());
    }

    #[test]
    fn a_protocol_or_exporter_this_build_lacks_is_refused_by_name() {
        let grpc = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ];
        let e = export(&grpc).unwrap_err().to_string();
        assert!(e.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"), "{e}");
        assert!(e.contains("http/protobuf"), "{e}");
        // The signal's own variable wins over the general one.
        let own = [
            grpc[0],
            grpc[1],
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ];
        assert!(export(&own).unwrap().traces);
        let zipkin = [grpc[0], ("OTEL_TRACES_EXPORTER", "zipkin")];
        assert!(export(&zipkin).unwrap_err().to_string().contains("zipkin"));
    }
}
