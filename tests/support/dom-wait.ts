/**
 * A setup file of the unit-dom project: how long findBy* and waitFor wait before failing. A screen's
 * views and widgets load their code lazily, and on a loaded 2-core machine the first load of a chunk in a
 * file takes longer than testing-library's default 1 s (tests then failed waiting for a form field that
 * came a moment later). A passing test waits no longer than before; only a failing one waits up to this.
 */
import { configure } from "@testing-library/react";

configure({ asyncUtilTimeout: 10_000 });
