/**
 * The characters that XML's markup is followed by, as char codes (the same as
 * bytes, all ASCII): one list for each scanner that follows just enough of
 * XML without parsing it (xml-bounds.ts on a workbook part's bytes,
 * iso20022/pain001-cut.ts and iso20022/transfer-scan.ts on a pain.001's text).
 */
export const XML_CHAR = {
  LT: 0x3c,
  GT: 0x3e,
  SLASH: 0x2f,
  BANG: 0x21,
  QUESTION: 0x3f,
  DASH: 0x2d,
  BRACKET: 0x5d,
  DQUOTE: 0x22,
  SQUOTE: 0x27,
  EQUAL: 0x3d,
  COLON: 0x3a,
} as const;
