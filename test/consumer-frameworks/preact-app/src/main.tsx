import { render } from 'preact';
import { App } from './App.tsx';

const target = document.getElementById('app');
if (target) render(<App />, target);
