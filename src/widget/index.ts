export { registerWidgetRoutes, WidgetProcessSchema, type WidgetProcessSource } from './routes.js';
