import { intakeCases } from './intake-cases.js';

intakeCases();
