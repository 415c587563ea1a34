import { readingCases } from './reading-cases.js';

readingCases();
