import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as ecs from "aws-cdk-lib/aws-ecs";
import type { DaemonService } from "./daemon-service.js";

/**
 * A deployment whose new tasks get killed or break what the service promises rolls back on its
 * own, like one whose tasks fail to start (the circuit breaker). Not the unclean drain: that is
 * the old tasks' stop, which a rollback would only repeat.
 */
export function rollBackOnAlarms(daemon: DaemonService, alarms: readonly cloudwatch.IAlarm[]): void {
  daemon.service.enableDeploymentAlarms(
    alarms.map((alarm) => alarm.alarmName),
    { behavior: ecs.AlarmBehavior.ROLLBACK_ON_ALARM },
  );
}
