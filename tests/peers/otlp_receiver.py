"""A real OTLP/HTTP receiver for the tests, built on the official protobuf
definitions (PyPI `opentelemetry-proto`).

    python otlp_receiver.py [--discard] [PORT]

Binds 127.0.0.1 on PORT (default 0: a free one) and prints `listening PORT`
as its first line. Serves:

    POST   /v1/traces        ExportTraceServiceRequest (protobuf, gzip or not)
    POST   /v1/metrics       ExportMetricsServiceRequest (protobuf, gzip or not)
    GET    /spans            the spans received so far, as JSON
    DELETE /spans            forgets them (204)
    GET    /metrics-received the metrics received so far, as JSON

A metric's "kind" is the name of its data field ("sum", "gauge",
"histogram", ...). Only protobuf is accepted (else 415); undecodable bodies
get 400. Nothing is logged per request. With --discard (for benchmarks)
every export is answered without being decoded or kept.
"""

import gzip
import json
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

PROTOBUF = "application/x-protobuf"

lock = threading.Lock()
spans = []
metrics = []


def any_value(v):
    """An AnyValue as a plain Python value."""
    which = v.WhichOneof("value")
    if which == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return attributes(v.kvlist_value.values)
    if which == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, which) if which else None


def attributes(kvs):
    return {kv.key: any_value(kv.value) for kv in kvs}


def service_name(resource):
    return attributes(resource.attributes).get("service.name")


def span_json(span, service, scope):
    return {
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex(),
        "trace_state": span.trace_state,
        "name": span.name,
        # SPAN_KIND_SERVER -> SERVER, STATUS_CODE_ERROR -> ERROR
        "kind": Span.SpanKind.Name(span.kind).removeprefix("SPAN_KIND_"),
        "attributes": attributes(span.attributes),
        "links": [
            {
                "trace_id": link.trace_id.hex(),
                "span_id": link.span_id.hex(),
                "trace_state": link.trace_state,
                "attributes": attributes(link.attributes),
            }
            for link in span.links
        ],
        "status": {
            "code": Status.StatusCode.Name(span.status.code).removeprefix("STATUS_CODE_"),
            "message": span.status.message,
        },
        "service_name": service,
        "scope": scope,
    }


def metric_json(metric):
    kind = metric.WhichOneof("data")
    points = []
    if kind in ("gauge", "sum", "histogram", "exponential_histogram", "summary"):
        for p in getattr(metric, kind).data_points:
            point = {"attributes": attributes(p.attributes)}
            if kind in ("gauge", "sum"):
                point["value"] = getattr(p, p.WhichOneof("value") or "as_int")
            else:
                point["count"] = p.count
                if kind == "summary" or p.HasField("sum"):
                    point["sum"] = p.sum
            points.append(point)
    return {"name": metric.name, "unit": metric.unit, "kind": kind, "points": points}


def traces(body):
    request = ExportTraceServiceRequest.FromString(body)
    out = []
    for rs in request.resource_spans:
        service = service_name(rs.resource)
        for ss in rs.scope_spans:
            out += [span_json(s, service, ss.scope.name) for s in ss.spans]
    with lock:
        spans.extend(out)
    return ExportTraceServiceResponse()


def metrics_export(body):
    request = ExportMetricsServiceRequest.FromString(body)
    out = [
        metric_json(m)
        for rm in request.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    ]
    with lock:
        metrics.extend(out)
    return ExportMetricsServiceResponse()


EXPORTS = {"/v1/traces": traces, "/v1/metrics": metrics_export}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", content_type=None):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        if status != 204:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunks = []
        while size := int(self.rfile.readline().split(b";")[0], 16):
            chunks.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(chunks)

    def do_POST(self):
        body = self.body()
        export = EXPORTS.get(self.path.split("?")[0])
        if export is None:
            return self.answer(404)
        if DISCARD:
            return self.answer(200, b"", PROTOBUF)
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type != PROTOBUF:
            return self.answer(415, f"not {PROTOBUF}: {content_type!r}".encode(), "text/plain")
        try:
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                body = gzip.decompress(body)
            response = export(body)
        except (DecodeError, OSError, EOFError, zlib.error) as e:
            return self.answer(400, str(e).encode(), "text/plain")
        self.answer(200, response.SerializeToString(), PROTOBUF)

    def do_GET(self):
        stored = {"/spans": spans, "/metrics-received": metrics}.get(self.path.split("?")[0])
        if stored is None:
            return self.answer(404)
        with lock:
            body = json.dumps(stored).encode()
        self.answer(200, body, "application/json")

    def do_DELETE(self):
        if self.path.split("?")[0] != "/spans":
            return self.answer(404)
        with lock:
            spans.clear()
        self.answer(204)


DISCARD = "--discard" in sys.argv[1:]


def main():
    args = [a for a in sys.argv[1:] if a != "--discard"]
    port = int(args[0]) if args else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
