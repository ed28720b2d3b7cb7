// The Prometheus text-format parser the metrics tests read /metrics with (it ships no types).
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
