export { DEFAULT_DASHBOARD_DIR, loadDashboardAssets, type DashboardAssets } from './assets.js';
export { DASHBOARD_PREFIX, registerDashboardRoutes } from './routes.js';
