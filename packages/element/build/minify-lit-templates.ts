import ts from 'typescript';
import type { Plugin } from 'vite';

/** Collapses a `css` literal: comments and whitespace around punctuation go, one space stays elsewhere. */
export function minifyCss(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([{};,>])\s*/g, '$1')
    .replace(/:\s+/g, ':')
    .replace(/;}/g, '}')
    .trim();
}

/**
 * Collapses an `html` literal's indentation: a run of whitespace with a line break becomes one
 * space, or nothing between two tags. Runs without a line break are left alone, since text like
 * `${a} ${b}` needs its space.
 */
export function minifyHtml(text: string): string {
  return text.replace(/>\s*\n\s*</g, '><').replace(/\s*\n\s*/g, ' ');
}

/**
 * A Vite plugin that minifies the static parts of Lit's `html` and `css` tagged templates in the
 * element's sources. The JS minifier keeps template text as is, indentation included, and every
 * byte of it ships in the CDN bundle. Templates are found with the TypeScript parser, not a
 * regular expression, so nested templates and `${}` expressions are handled exactly.
 */
export function minifyLitTemplates(): Plugin {
  return {
    name: 'analytics-chart:minify-lit-templates',
    enforce: 'pre',
    transform(code, id) {
      if (!/\/src\/[^?]*\.ts$/.test(id) || !/\b(html|css)`/.test(code)) return null;
      const source = ts.createSourceFile(id, code, ts.ScriptTarget.Latest, true);
      const edits: { start: number; end: number; text: string }[] = [];
      const visit = (node: ts.Node): void => {
        if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag)) {
          const minify =
            node.tag.text === 'css' ? minifyCss : node.tag.text === 'html' ? minifyHtml : undefined;
          if (minify) {
            const template = node.template;
            const pieces: ts.Node[] = ts.isNoSubstitutionTemplateLiteral(template)
              ? [template]
              : [template.head, ...template.templateSpans.map((s) => s.literal)];
            for (const piece of pieces) {
              // Each piece's text runs from after "`" or "}" to before "`" or "${".
              const start = piece.getStart(source) + 1;
              const end = piece.end - (code.slice(piece.end - 2, piece.end) === '${' ? 2 : 1);
              edits.push({ start, end, text: minify(code.slice(start, end)) });
            }
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      if (!edits.length) return null;
      let out = code;
      for (const edit of edits.sort((a, b) => b.start - a.start)) {
        out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
      }
      return { code: out, map: null };
    },
  };
}
