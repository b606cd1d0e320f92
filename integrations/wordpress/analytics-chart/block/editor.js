/**
 * The Analytics Chart block in the editor: fields for the id and the presentation, and a preview
 * rendered by the server exactly as the post will show it. Plain script over WordPress's
 * globals, so the plugin has no build step.
 */
((wp) => {
  const el = wp.element.createElement;
  const __ = wp.i18n.__;
  const InspectorControls = wp.blockEditor.InspectorControls;
  const useBlockProps = wp.blockEditor.useBlockProps;
  const PanelBody = wp.components.PanelBody;
  const TextControl = wp.components.TextControl;
  const SelectControl = wp.components.SelectControl;
  const Placeholder = wp.components.Placeholder;
  const ServerSideRender = wp.serverSideRender;

  wp.blocks.registerBlockType('analytics-chart/chart', {
    edit: (props) => {
      const attributes = props.attributes;
      const set = props.setAttributes;
      const idField = el(TextControl, {
        label: __('Chart id or embed URL', 'analytics-chart'),
        help: __(
          'The public id (or the embed URL) whoever runs the edge gave you.',
          'analytics-chart',
        ),
        value: attributes.id,
        onChange: (value) => {
          set({ id: value.trim() });
        },
      });
      const inspector = el(
        InspectorControls,
        null,
        el(
          PanelBody,
          { title: __('Chart', 'analytics-chart') },
          idField,
          el(TextControl, {
            label: __('Height (pixels)', 'analytics-chart'),
            type: 'number',
            min: 80,
            max: 2000,
            value: attributes.height === undefined ? '' : String(attributes.height),
            onChange: (value) => {
              set({ height: value === '' ? undefined : Number(value) });
            },
          }),
          el(SelectControl, {
            label: __('Theme', 'analytics-chart'),
            value: attributes.theme,
            options: [
              { label: __('Default', 'analytics-chart'), value: '' },
              { label: __('Light', 'analytics-chart'), value: 'light' },
              { label: __('Dark', 'analytics-chart'), value: 'dark' },
              { label: __('Follow the reader', 'analytics-chart'), value: 'auto' },
            ],
            onChange: (value) => {
              set({ theme: value });
            },
          }),
          el(TextControl, {
            label: __('Range', 'analytics-chart'),
            help: __('One of the ranges the chart allows, such as 7d.', 'analytics-chart'),
            value: attributes.range,
            onChange: (value) => {
              set({ range: value.trim() });
            },
          }),
          el(TextControl, {
            label: __('Title (for screen readers)', 'analytics-chart'),
            value: attributes.title,
            onChange: (value) => {
              set({ title: value });
            },
          }),
        ),
      );
      const body = attributes.id
        ? el(ServerSideRender, { block: 'analytics-chart/chart', attributes: attributes })
        : el(
            Placeholder,
            { icon: 'chart-line', label: __('Analytics Chart', 'analytics-chart') },
            idField,
          );
      return el('div', useBlockProps(), inspector, body);
    },
    save: () => null,
  });
})(window.wp);
