/** A request body over the limit its server sets: refused (413) before it is read whole. Shared by paybatch's webhook receiver and the sandbox. */
export class BodyTooLarge extends Error {}
