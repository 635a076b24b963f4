/** The web view's entry: mounts the app in #app. */
import { render } from 'preact';
import { App } from './app.js';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
