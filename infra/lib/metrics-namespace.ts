/** The CloudWatch namespace of every metric the stack makes (log lines counted, gauges forwarded). */
export const METRICS_NAMESPACE = "OutboxWorkers";
