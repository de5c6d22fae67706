export { apiTimeouts } from "./api-timeouts.js";
export { listenPhotoServer } from "./daemon.js";
export { deadlineTransaction, photoDatabase } from "./db/connections.js";
export { migrateApiTables } from "./db/migrate.js";
export { photoMigrations } from "./db/migrations/index.js";
export type { GearLinkState, PhotoTables } from "./db/schema.js";
export {
  createEquipmentClient,
  type EquipmentClient,
  type EquipmentClientSettings,
  type GearLink,
  type LinkOutcome,
} from "./equipment-client.js";
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
export { reconcileSettings } from "./reconcile-once.js";
export { type Reconciler, startReconciler } from "./reconciler.js";
export {
  createPhotoServer,
  type PhotoServer,
  type PhotoServerSettings,
  type ShutdownSummary,
} from "./server.js";
export { API_PLAN_CACHE_MODE, type ApiConfig, apiSettings } from "./settings.js";
