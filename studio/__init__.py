"""The studio application: windows and controllers for live runs, replay, labelling and authoring."""
