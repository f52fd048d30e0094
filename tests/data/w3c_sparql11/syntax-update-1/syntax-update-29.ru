DELETE DATA { <s> <p> 'o1', 'o2', 'o3' }
