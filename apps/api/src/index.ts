export { reconcileSettings } from "./cli/reconcile.js";
export { listenPhotoServer } from "./daemon.js";
export {
  createEquipmentClient,
  type EquipmentClient,
  type EquipmentClientSettings,
  type GearLink,
  type LinkOutcome,
} from "./equipment-client.js";
export { PhotoServerOptionsError } from "./errors.js";
export { getPhoto, type PhotoView } from "./get-photo.js";
export { API_METRICS, type ApiMetrics, createApiMetrics } from "./metrics.js";
export {
  type NewPhoto,
  newPhoto,
  type PostedPhoto,
  type PostPhoto,
  type PostPhotoDependencies,
  postPhoto,
} from "./post-photo.js";
export {
  type ReconcileConfig,
  type ReconcileOptions,
  type ReconcileSummary,
  reconcileOptions,
  reconcilePendingLinks,
} from "./reconcile-links.js";
export { startReconciler } from "./reconciler.js";
export { createPhotoServer, type PhotoServer, type ShutdownSummary } from "./server.js";
export type { PhotoServerOptions } from "./server-options.js";
export { API_PLAN_CACHE_MODE, type ApiConfig, apiSettings, apiTimeouts, checkApi } from "./settings.js";
