import { render } from 'preact';
import { installStyleShim } from './cspstyle';
import { App } from './app';

installStyleShim();
render(<App />, document.getElementById('app')!);
