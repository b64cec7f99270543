"""The JSON API under /api (and the operations endpoints), one router module per resource: its
response shapes are app/schemas/ of the same name, its HTML pages app/pages/ of the same name
where the resource has pages."""
