bundled
