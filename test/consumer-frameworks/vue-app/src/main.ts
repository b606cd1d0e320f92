// Registers <analytics-chart> and types it in Vue's templates.
import '@analytics-chart/element/vue';
import { createApp } from 'vue';
import App from './App.vue';

createApp(App).mount('#app');
