"""The SOLVE loop: dispatch, the step handlers, verification, growth and assembly."""
