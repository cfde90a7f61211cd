/** `npm start`: runs the service (embedded PostgreSQL unless DATABASE_URL is set). */
import { runService } from './run-service.js';

await runService();
